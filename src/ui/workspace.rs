//! The page's view state ([`Workspace`]): the open tab, and one state per view — the
//! Strategy ladder and budget ([`StrategyState`]), the automatic planner ([`SearchState`]),
//! the Compare columns ([`CompareState`]) — kept while a view is hidden, the results the views
//! read (the escalation, the strategy table, the step timeline: made once on first read and
//! kept by the page, [`Workspace::escalation`]), with the one GPU
//! budget of the flowchart and the search following the planner's world size; choosing a
//! tab ([`select_tab`]), writing a plan into the planner with the changes it makes
//! ([`apply_to_planner`]) and the way back to the planner after an Apply
//! ([`show_planner_at_top`]).
//!
//! No view is imported here: views read this state from context, and `tabs.rs` mounts them.

use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::after_paint::AfterPaint;
use super::state::Planner;
use super::url_sync::{location_query, UrlNotice};
use crate::error::InputError;
use crate::model::breakdown::Breakdown;
use crate::model::timeline::{timeline, Timeline};
use crate::page_query::page_param;
use crate::plan::escalation::{escalate_ladder, Escalation, Step};
use crate::plan::search::SearchResult;
use crate::plan::strategy_table::{strategy_rows, StrategyRow};
use crate::scenario::Scenario;
use crate::url;

/// Largest GPU budget the Strategy view accepts.
pub const MAX_GPUS: u64 = 4096;

/// The three views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Planner,
    Strategy,
    Compare,
}

impl Tab {
    pub const ALL: [Tab; 3] = [Tab::Planner, Tab::Strategy, Tab::Compare];

    pub fn id(self) -> &'static str {
        match self {
            Tab::Planner => "planner",
            Tab::Strategy => "strategy",
            Tab::Compare => "compare",
        }
    }

    /// The tab a `view=` page key names (the planner for anything else).
    pub fn from_id(id: &str) -> Tab {
        Tab::ALL.into_iter().find(|t| t.id() == id).unwrap_or(Tab::Planner)
    }

    pub fn label(self) -> &'static str {
        match self {
            Tab::Planner => "Planner",
            Tab::Strategy => "Strategy",
            Tab::Compare => "Compare",
        }
    }
}

/// One rung of the editable ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rung {
    pub step: Step,
    pub enabled: bool,
}

impl Rung {
    /// The ladder a budget of `gpus` starts from ([`Step::default_ladder`]), every rung on.
    pub fn defaults(gpus: u64) -> Vec<Rung> {
        Step::default_ladder(gpus).iter().map(|&step| Rung { step, enabled: true }).collect()
    }
}

/// A finished search and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    pub result: SearchResult,
    pub millis: f64,
    pub gpus: u64,
    /// Which search this was (1, 2, …).
    pub run: u32,
}

/// One Compare column: a key for the list, its own scenario and that scenario's plan.
#[derive(Clone, Copy, Debug)]
pub struct CompareSlot {
    pub key: u32,
    pub scenario: RwSignal<Scenario>,
    /// [`crate::estimate`] of the scenario, computed once per change of it (none while it
    /// is invalid); the column, the chart and the table all read this one memo.
    pub plan: Memo<Option<Breakdown>>,
}

/// The Strategy view's ladder and its GPU budget.
#[derive(Clone, Copy)]
pub struct StrategyState {
    /// The escalation ladder, in order, each step on or off.
    pub ladder: RwSignal<Vec<Rung>>,
    /// GPUs available to the escalation's distributed steps: the planner's world size
    /// (dp × tp × pp × cp) until edited, and again whenever that changes.
    pub gpus: RwSignal<u64>,
    /// The planner's world size (at most [`MAX_GPUS`]); a budget equal to it stays out of the link.
    pub world: Memo<u64>,
}

/// The automatic planner's margin, result and progress; its GPUs are the Strategy budget
/// ([`StrategyState::gpus`]), one input for the flowchart and the search.
#[derive(Clone, Copy)]
pub struct SearchState {
    /// Share of each GPU's capacity the search's layouts and the ladder's plan leave free.
    pub margin: RwSignal<f64>,
    pub outcome: RwSignal<Option<SearchOutcome>>,
    /// `(layouts done, layouts)` while a search runs long enough to show it.
    pub progress: RwSignal<Option<(usize, usize)>>,
    pub running: RwSignal<bool>,
    /// Bumped by every new search; a running search stops when it no longer matches.
    pub generation: StoredValue<u32>,
}

/// The "What to rent" table of the Strategy view.
#[derive(Clone, Copy)]
pub struct RentState {
    /// Most GPUs to rent.
    pub budget: RwSignal<u64>,
    /// The rows found so far (ranked once all are in).
    pub rows: RwSignal<Vec<crate::plan::rent::RentRow>>,
    /// `(rows done, rows)` while the table is being filled.
    pub progress: RwSignal<Option<(usize, usize)>>,
    /// Bumped by every new run; a running one stops when it no longer matches.
    pub generation: StoredValue<u32>,
    /// Milliseconds the last complete table took.
    pub millis: RwSignal<Option<f64>>,
    /// Fastest first instead of cheapest first.
    pub by_time: RwSignal<bool>,
}

/// A reader of a query's part into the page state ([`CompareState::from_link`]).
pub type LinkReader = fn(Workspace, &str);

/// The Compare view's columns and its strategy table's GPU count.
#[derive(Clone, Copy)]
pub struct CompareState {
    /// Compare columns (empty until the Compare view first opens).
    pub columns: RwSignal<Vec<CompareSlot>>,
    pub next_key: StoredValue<u32>,
    /// GPUs for the strategy table.
    pub table_gpus: RwSignal<u64>,
    /// What the link's `cmp=` pairs could not say (shown by the Compare view).
    pub notice: RwSignal<Vec<InputError>>,
    /// Reads the Compare columns of a query into this state (back/forward); set by the Compare
    /// view when it first opens, so its code stays in the view's chunk.
    pub from_link: StoredValue<Option<LinkReader>>,
}

/// The page's view state: the open tab and one state per view, kept across tab switches.
#[derive(Clone, Copy)]
pub struct Workspace {
    pub tab: RwSignal<Tab>,
    /// The link names the open tab even when it is the planner (`view=planner`, as after an
    /// Apply); choosing a tab clears it.
    pub view_named: RwSignal<bool>,
    pub strategy: StrategyState,
    pub search: SearchState,
    pub rent: RentState,
    pub compare: CompareState,
    /// The last scenario written into the planner by an Apply or a "use this", with what it
    /// changed in words; shown on the Planner while the planner holds that scenario.
    pub applied: RwSignal<Option<(Scenario, String)>>,
    /// The page's owner: Compare columns and the results the views read belong to it, not to a
    /// view, so they outlive the view when another tab is chosen.
    owner: StoredValue<Option<Owner>>,
}

impl Workspace {
    /// Creates the state, provides it as context and installs `window.headroomBench`.
    pub fn provide() -> Workspace {
        let planner = Planner::get();
        let world = Memo::new(move |_| planner.valid.with(|s| s.parallel.world_size().clamp(1, MAX_GPUS)));
        let query = location_query();
        let (budget, ladder) = strategy_from_link(&query, world.get_untracked());
        let view = page_param(&query, "view");
        let ws = Workspace {
            tab: RwSignal::new(Tab::from_id(view.as_deref().unwrap_or_default())),
            view_named: RwSignal::new(view.as_deref() == Some(Tab::Planner.id())),
            strategy: StrategyState { ladder: RwSignal::new(ladder), gpus: RwSignal::new(budget), world },
            search: SearchState {
                margin: RwSignal::new(crate::plan::DEFAULT_MARGIN),
                outcome: RwSignal::new(None),
                progress: RwSignal::new(None),
                running: RwSignal::new(false),
                generation: StoredValue::new(0),
            },
            rent: RentState {
                budget: RwSignal::new(8),
                rows: RwSignal::new(Vec::new()),
                progress: RwSignal::new(None),
                generation: StoredValue::new(0),
                millis: RwSignal::new(None),
                by_time: RwSignal::new(false),
            },
            compare: CompareState {
                columns: RwSignal::new(Vec::new()),
                next_key: StoredValue::new(0),
                table_gpus: RwSignal::new(8),
                notice: RwSignal::new(Vec::new()),
                from_link: StoredValue::new(None),
            },
            applied: RwSignal::new(None),
            owner: StoredValue::new(Owner::current()),
        };
        // A new planner layout is a new budget: a one-GPU scenario is planned on one GPU.
        Effect::new(move |seen: Option<()>| {
            let gpus = world.get();
            if seen.is_some() {
                ws.strategy.gpus.set(gpus);
            }
        });
        // The ladder follows its budget (one GPU or several) while it is a default one.
        Effect::new(move |previous: Option<u64>| {
            let gpus = ws.strategy.gpus.get();
            if let Some(before) = previous {
                if ws.strategy.ladder.with_untracked(|l| *l == Rung::defaults(before)) {
                    ws.strategy.ladder.set(Rung::defaults(gpus));
                }
            }
            gpus
        });
        provide_context(ws);
        install_bench_hook();
        ws
    }

    pub fn get() -> Workspace {
        expect_context::<Workspace>()
    }

    /// A new Compare column holding `scenario`, owned by the page (see [`Workspace`]).
    pub fn new_slot(self, scenario: Scenario) -> CompareSlot {
        let key = self.compare.next_key.get_value();
        self.compare.next_key.set_value(key.wrapping_add(1));
        let make = move || {
            let scenario = RwSignal::new(scenario);
            let plan = Memo::new(move |_| scenario.with(|s| s.validate().is_empty().then(|| crate::estimate(s))));
            CompareSlot { key, scenario, plan }
        };
        match self.owner.get_value() {
            Some(owner) => owner.with(make),
            None => make(),
        }
    }

    /// A result of the page state computed from other state (a plan, a timeline): made by
    /// `make` under the page's owner the first time a view reads it, and kept there as context
    /// (one per type), so every view reads the same one and it outlives the view. Made on first
    /// read, not in [`Workspace::provide`], so its code stays in the chunk of the view that
    /// needs it (`lazy_view.rs`: a function only a chunk reaches is cut into that chunk).
    fn page_result<T: Clone + Send + Sync + 'static>(self, make: impl FnOnce() -> T) -> T {
        let Some(owner) = self.owner.get_value() else {
            return make();
        };
        if let Some(made) = owner.with(use_context::<T>) {
            return made;
        }
        let made = owner.with(make);
        owner.with(|| provide_context(made.clone()));
        made
    }

    /// The Strategy view's escalation: the edited ladder run on the planner's (last valid)
    /// scenario within the GPU budget and the search's margin
    /// ([`crate::plan::escalation::escalate_ladder`]), once per change of them.
    pub fn escalation(self) -> Memo<Escalation> {
        let planner = Planner::get();
        self.page_result(move || {
            Memo::new(move |_| {
                let ladder: Vec<(Step, bool)> = self.strategy.ladder.with(|l| l.iter().map(|r| (r.step, r.enabled)).collect());
                let gpus = self.strategy.gpus.get();
                let margin = self.search.margin.get();
                planner.valid.with(|s| escalate_ladder(s, &ladder, gpus, margin))
            })
        })
    }

    /// The Compare view's strategy table for the planner's (last valid) scenario and its GPU
    /// count ([`crate::plan::strategy_table::strategy_rows`]); a unit switch only re-renders it.
    pub fn strategy_table(self) -> Memo<Vec<StrategyRow>> {
        let planner = Planner::get();
        self.page_result(move || {
            Memo::new(move |_| {
                let gpus = self.compare.table_gpus.get();
                planner.valid.with(|s| strategy_rows(s, gpus))
            })
        })
    }

    /// The step timeline of the planner's plan ([`crate::model::timeline::timeline`]), worked
    /// out after the frame showing the new bar has been painted ([`AfterPaint`]), so neither the
    /// first chart nor a dragged slider waits for it; `None` until then, and for a plan with no
    /// training step (inference).
    pub fn timeline(self) -> RwSignal<Option<Timeline>> {
        let planner = Planner::get();
        self.page_result(move || {
            let points = RwSignal::new(None::<Timeline>);
            let after_paint = AfterPaint::new();
            Effect::new(move |_| {
                planner.plan.track();
                after_paint.schedule(move || points.set(planner.plan.with_untracked(|p| p.breakdown.step.is_some().then(|| timeline(&p.breakdown)))));
            });
            points
        })
    }

    /// Replaces the Compare columns with `slots`; the columns left out are disposed once
    /// their views are gone (on the next animation frame).
    pub fn set_columns(self, slots: Vec<CompareSlot>) {
        let keep: Vec<u32> = slots.iter().map(|s| s.key).collect();
        let mut dropped = Vec::new();
        self.compare.columns.update(|c| {
            dropped = c.iter().copied().filter(|s| !keep.contains(&s.key)).collect();
            *c = slots;
        });
        if !dropped.is_empty() {
            request_animation_frame(move || {
                for slot in dropped {
                    slot.plan.dispose();
                    slot.scenario.dispose();
                }
            });
        }
    }
}

/// The Strategy view's GPU budget and ladder from the link's page keys (`gpus=`, `ladder=`,
/// [`url::BUDGET_KEY`]): the planner's world size and the default ladder for the budget where
/// absent. What cannot be read joins the link's problems ([`UrlNotice`]). The address bar keeps
/// them in the link while they differ from these defaults (`address_bar.rs`).
fn strategy_from_link(query: &str, world: u64) -> (u64, Vec<Rung>) {
    let mut problems = Vec::new();
    let budget = page_param(query, url::BUDGET_KEY).map_or(world, |v| {
        url::decode_budget(&v, MAX_GPUS).unwrap_or_else(|e| {
            problems.push(e);
            world
        })
    });
    let ladder = page_param(query, url::LADDER_KEY).map_or_else(
        || Rung::defaults(budget),
        |v| {
            let (rungs, errors) = url::decode_ladder(&v);
            problems.extend(errors);
            rungs.into_iter().map(|(step, enabled)| Rung { step, enabled }).collect()
        },
    );
    if let Some(notice) = use_context::<UrlNotice>().filter(|_| !problems.is_empty()) {
        notice.0.update(|e| e.extend(problems));
    }
    (budget, ladder)
}

/// The model's search on the default scenario `repeats` times: layouts, evaluations and
/// milliseconds. In the `search_bench` WASM chunk: the page never needs it.
#[wasm_split(search_bench, wasm_split_path = ::leptos::wasm_split, fallible)]
fn search_bench(gpus: u64, repeats: u32) -> Result<(u64, u64, f64), SplitLoaderError> {
    let base = Scenario::default();
    let start = js_sys::Date::now();
    let (mut layouts, mut evaluations) = (0u64, 0u64);
    for _ in 0..repeats {
        let r = crate::plan::search::search(&base, gpus, 10);
        layouts += r.layouts;
        evaluations += r.evaluations;
    }
    Ok((layouts, evaluations, js_sys::Date::now() - start))
}

/// `window.headroomBench(gpus, repeats)`: a promise of [`search_bench`]'s figures as
/// `{layouts, evaluations, millis}`, for `scripts/bench-search.mjs` (Playwright's
/// `page.evaluate` awaits it). Not used by the page itself.
fn install_bench_hook() {
    let bench = Closure::<dyn Fn(JsValue, JsValue) -> js_sys::Promise>::new(|gpus: JsValue, repeats: JsValue| {
        let gpus = gpus.as_f64().filter(|g| g.is_finite() && *g >= 1.0).map_or(8, |g| g.min(4096.0) as u64);
        let repeats = repeats.as_f64().filter(|r| r.is_finite() && *r >= 1.0).map_or(1, |r| r.min(1000.0) as u32);
        wasm_bindgen_futures::future_to_promise(async move {
            let (layouts, evaluations, millis) = search_bench(gpus, repeats).await.map_err(|e| JsValue::from_str(&e.to_string()))?;
            let out = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&out, &"layouts".into(), &JsValue::from_f64(layouts as f64));
            let _ = js_sys::Reflect::set(&out, &"evaluations".into(), &JsValue::from_f64(evaluations as f64));
            let _ = js_sys::Reflect::set(&out, &"millis".into(), &JsValue::from_f64(millis));
            Ok(out.into())
        })
    });
    let _ = js_sys::Reflect::set(&js_sys::global(), &"headroomBench".into(), &bench.into_js_value());
}

/// Moves keyboard focus to the tab button of `tab`.
pub fn focus_tab(tab: Tab) {
    if let Some(el) = document().get_element_by_id(&format!("tab-{}", tab.id())) {
        if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
            let _ = el.focus();
        }
    }
}

/// Shows `tab`; the address bar follows (`view=`; none for the planner).
pub fn select_tab(ws: Workspace, tab: Tab) {
    // Choosing the open tab again must not mount its view afresh.
    if ws.tab.get_untracked() != tab {
        ws.tab.set(tab);
    }
    if ws.view_named.get_untracked() {
        ws.view_named.set(false);
    }
    if tab == Tab::Planner {
        // The planner chart may have been resized while hidden: let it measure again.
        if let Ok(ev) = web_sys::Event::new("resize") {
            let _ = window().dispatch_event(&ev);
        }
    }
}

/// Writes `next` into the planner as `what` ("layout 1 of the automatic planner"), keeping
/// each change it makes ([`crate::plan::changes::changes_text`]) for the Planner to show.
pub fn apply_to_planner(ws: Workspace, planner: Planner, what: &str, next: Scenario) {
    let changes = planner.scenario.with_untracked(|before| crate::plan::changes::changes_text(before, &next));
    ws.applied.set(Some((next.clone(), format!("{what}: {changes}"))));
    planner.scenario.set(next);
}

/// After an "Apply": the Planner tab, `view=planner` in the link (named, so the link says
/// where Apply went), the page at its top once the planner is drawn, and the focus on the
/// Planner tab.
pub fn show_planner_at_top(ws: Workspace) {
    select_tab(ws, Tab::Planner);
    ws.view_named.set(true);
    request_animation_frame(|| {
        focus_tab(Tab::Planner);
        window().scroll_to_with_x_and_y(0.0, 0.0);
    });
}
