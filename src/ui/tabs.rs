//! The tab bar (Planner / Strategy / Compare) and the lazily mounted panels of the Strategy
//! and Compare views.
//!
//! The Planner panel stays mounted (and `hidden`) so its chart and text boxes keep their
//! state; the other views mount when their tab is first chosen and read their state from
//! the [`Workspace`] context. A tab switch is one signal: no routing.

use leptos::prelude::*;

use super::compare::CompareView;
use super::state::Planner;
use super::strategy::StrategyView;
use super::workspace::{focus_tab, select_tab, Tab, Workspace};

/// The tab bar: buttons with `role="tab"`, arrow keys / Home / End move between them.
#[component]
pub fn TabBar() -> impl IntoView {
    let ws = Workspace::get();
    let select = move |tab: Tab| select_tab(ws, tab);
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let i = Tab::ALL.iter().position(|&t| t == ws.tab.get_untracked()).unwrap_or(0);
        let n = Tab::ALL.len();
        let next = match ev.key().as_str() {
            "ArrowRight" => (i + 1) % n,
            "ArrowLeft" => (i + n - 1) % n,
            "Home" => 0,
            "End" => n - 1,
            _ => return,
        };
        ev.prevent_default();
        select(Tab::ALL[next]);
        focus_tab(Tab::ALL[next]);
    };
    view! {
        <nav class="tabs" role="tablist" aria-label="Views" on:keydown=on_key>
            {Tab::ALL
                .iter()
                .map(|&tab| {
                    let selected = move || ws.tab.get() == tab;
                    view! {
                        <button
                            type="button"
                            role="tab"
                            class="tab"
                            id=format!("tab-{}", tab.id())
                            aria-controls=format!("panel-{}", tab.id())
                            aria-selected=move || selected().to_string()
                            tabindex=move || if selected() { "0" } else { "-1" }
                            on:click=move |_| select(tab)
                        >
                            {tab.label()}
                        </button>
                    }
                })
                .collect_view()}
        </nav>
    }
}

/// The Strategy and Compare panels, each mounted while its tab is selected.
#[component]
pub fn OtherViews() -> impl IntoView {
    let ws = Workspace::get();
    // Touch the planner context so a missing provider fails here, loudly, in development.
    let _ = Planner::get();
    move || match ws.tab.get() {
        Tab::Planner => ().into_any(),
        Tab::Strategy => view! {
            <main class="view strategy-view" id="panel-strategy" role="tabpanel" aria-labelledby="tab-strategy">
                <StrategyView />
            </main>
        }
        .into_any(),
        Tab::Compare => view! {
            <main class="view compare-view" id="panel-compare" role="tabpanel" aria-labelledby="tab-compare">
                <CompareView />
            </main>
        }
        .into_any(),
    }
}
