//! The automatic planner's search, run a chunk of layouts at a time so the page can yield
//! to the browser between chunks (and show progress). Same layouts, same evaluation and same
//! ranking as [`crate::model::search::search`]; a test checks the results are identical.
//!
//! Not a memory model: each layout goes through [`max_micro_batch`], [`estimate`] and
//! [`costs`]. (This would sit better in `model/search.rs` as a per-layout function that
//! `search` itself calls; it lives here so the model module stays untouched by the page.)

use crate::model::escalation::costs;
use crate::model::estimate;
use crate::model::search::{layouts, max_micro_batch, Candidate, SearchResult};
use crate::scenario::Scenario;

/// A search in progress.
#[derive(Clone, Debug)]
pub struct SearchRun {
    pending: Vec<Scenario>,
    next: usize,
    global_batch: u64,
    limit: usize,
    found: Vec<Candidate>,
    evaluations: u64,
}

impl SearchRun {
    /// Enumerates the layouts of `base` on `gpus` GPUs; nothing is evaluated yet.
    pub fn new(base: &Scenario, gpus: u64, limit: usize) -> SearchRun {
        let global_batch = base.training.micro_batch.max(1).saturating_mul(base.training.grad_accum.max(1)).saturating_mul(base.parallel.dp.max(1));
        SearchRun { pending: layouts(base, gpus), next: 0, global_batch, limit, found: Vec::new(), evaluations: 0 }
    }

    /// Layouts in the search.
    pub fn total(&self) -> usize {
        self.pending.len()
    }

    /// Layouts evaluated so far.
    pub fn done(&self) -> usize {
        self.next
    }

    pub fn is_finished(&self) -> bool {
        self.next >= self.pending.len()
    }

    /// Full estimates computed so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Evaluates up to `chunk` more layouts; returns true when none are left.
    pub fn step(&mut self, chunk: usize) -> bool {
        let end = self.next.saturating_add(chunk.max(1)).min(self.pending.len());
        for i in self.next..end {
            let mut s = self.pending[i].clone();
            let max_mb = max_micro_batch(&s, &mut self.evaluations);
            if max_mb == 0 {
                continue;
            }
            let per_replica = self.global_batch.div_ceil(s.parallel.dp.max(1)).max(1);
            let micro = max_mb.min(per_replica);
            s.training.micro_batch = micro;
            s.training.grad_accum = per_replica.div_ceil(micro);
            let breakdown = estimate(&s);
            self.evaluations += 1;
            let c = costs(&s, &breakdown);
            self.found.push(Candidate { step_seconds: c.step_seconds, tokens_per_second: c.tokens_per_second, costs: c, max_micro_batch: max_mb, breakdown, scenario: s });
        }
        self.next = end;
        self.is_finished()
    }

    /// The best `limit` layouts found so far, fastest first.
    pub fn result(&self) -> SearchResult {
        let mut results = self.found.clone();
        results.sort_by(|a, b| b.tokens_per_second.total_cmp(&a.tokens_per_second));
        results.truncate(self.limit);
        SearchResult { results, layouts: self.pending.len() as u64, evaluations: self.evaluations }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::search::search;

    #[test]
    fn chunked_search_equals_the_model_search() {
        for (model, gpus) in [("llama-3-8b", 8), ("gpt2", 4), ("llama-3-70b", 16)] {
            let base = Scenario { model: crate::scenario::ModelSpec::Preset(model.into()), ..Scenario::default() };
            let expected = search(&base, gpus, 10);
            let mut run = SearchRun::new(&base, gpus, 10);
            assert_eq!(run.total() as u64, expected.layouts);
            let mut chunks = 0;
            while !run.step(7) {
                chunks += 1;
                assert!(run.done() <= run.total());
            }
            assert!(chunks > 0 || run.total() <= 7);
            assert_eq!(run.result(), expected, "{model} on {gpus}");
        }
    }

    #[test]
    fn an_unknown_model_has_no_layouts_and_finishes_at_once() {
        let base = Scenario { model: crate::scenario::ModelSpec::Preset("no-such-model".into()), ..Scenario::default() };
        let mut run = SearchRun::new(&base, 8, 10);
        assert!(run.step(50));
        assert!(run.result().results.is_empty());
    }
}
