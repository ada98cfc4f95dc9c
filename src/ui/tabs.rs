//! The tab bar (Planner / Strategy / Compare) and the lazily mounted panels of the Strategy
//! and Compare views.
//!
//! The Planner panel stays mounted (and `hidden`) so its chart and text boxes keep their
//! state; the other views mount when their tab is first chosen and read their state from
//! the [`Workspace`] context. A tab switch is one signal: no routing. The code of each of
//! the other views is a WASM chunk of its own, fetched when the view first opens
//! ([`super::lazy_view`]).

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

use super::compare::CompareView;
use super::lazy_view::{lazy_view, Build, Chunked};
use super::state::Planner;
use super::strategy::StrategyView;
use super::stylesheet;
use super::workspace::{focus_tab, select_tab, Tab, Workspace};

/// The Strategy view's builder, in the `strategy` chunk.
#[wasm_split(strategy, wasm_split_path = ::leptos::wasm_split, fallible)]
fn strategy_view() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <StrategyView /> }.into_any())
}
static STRATEGY: Chunked<Build> = Chunked::new();

/// The Compare view's builder, in the `compare` chunk.
#[wasm_split(compare, wasm_split_path = ::leptos::wasm_split, fallible)]
fn compare_view() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <CompareView /> }.into_any())
}
static COMPARE: Chunked<Build> = Chunked::new();

/// The tab bar: buttons with `role="tab"`, arrow keys / Home / End move between them; the
/// tab list sits in a navigation landmark (a `nav` given the tablist role would be none).
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
        <nav class="tabs-nav" aria-label="Views">
        <div class="tabs" role="tablist" aria-label="Views" on:keydown=on_key>
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
        </div>
        </nav>
    }
}

/// The Strategy and Compare panels, each mounted while its tab is selected.
#[component]
pub fn OtherViews() -> impl IntoView {
    let ws = Workspace::get();
    // Touch the planner context so a missing provider fails here, loudly, in development.
    let _ = Planner::get();
    move || {
        let tab = ws.tab.get();
        if tab != Tab::Planner {
            stylesheet::load(&stylesheet::VIEW_SHEETS);
        }
        match tab {
            Tab::Planner => ().into_any(),
            Tab::Strategy => view! {
                <div class="view strategy-view" id="panel-strategy" role="tabpanel" aria-labelledby="tab-strategy">
                    {lazy_view(&STRATEGY, strategy_view)}
                </div>
            }
            .into_any(),
            Tab::Compare => view! {
                <div class="view compare-view" id="panel-compare" role="tabpanel" aria-labelledby="tab-compare">
                    {lazy_view(&COMPARE, compare_view)}
                </div>
            }
            .into_any(),
        }
    }
}
