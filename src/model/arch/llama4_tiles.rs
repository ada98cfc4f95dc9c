//! How Llama 4's image processor cuts one image into tiles (transformers 5.25
//! `models/llama4/image_processing_llama4.py`).
//!
//! `find_supported_resolutions` (lines 88–141) lists every grid of 1 to `max_patches` tiles
//! (for each tile count from `max_patches` down to 1, its factor pairs `(rows, cols)` in
//! ascending rows, grouped by the ratio `rows / cols` in the order a ratio first appears).
//! `get_best_fit` (lines 180–276) scales the image to each grid without distortion (the
//! smaller of the two sides' scales, float32): the smallest scale ≥ 1 when one exists, else the
//! largest below 1; among the grids with that scale the one of least area (the first on a tie).
//! The image is cut into that grid, and when the grid has more than one tile a global tile (the
//! whole image resized to one tile) is added (`get_number_of_image_patches`, lines 316–340;
//! `_preprocess`, "add a global tile … if there are more than one tile"). Checked against the
//! processor at 30 image sizes in `tests/fixtures/measured/llama4_vision.json`.

/// The grids `find_supported_resolutions` lists, `(rows, cols)`, in its order.
fn supported_grids(max_tiles: u64) -> Vec<(u64, u64)> {
    let mut by_ratio: Vec<(f64, Vec<(u64, u64)>)> = Vec::new();
    for count in (1..=max_tiles.max(1)).rev() {
        for rows in (1..=count).filter(|r| count % r == 0) {
            let grid = (rows, count / rows);
            let ratio = grid.0 as f64 / grid.1 as f64;
            match by_ratio.iter_mut().find(|(r, _)| *r == ratio) {
                Some((_, grids)) => grids.push(grid),
                None => by_ratio.push((ratio, vec![grid])),
            }
        }
    }
    by_ratio.into_iter().flat_map(|(_, grids)| grids).collect()
}

/// The grid `get_best_fit` picks for an image of `width × height` px, tiles of `tile` px.
pub fn llama4_grid(width: u64, height: u64, tile: u64, max_tiles: u64) -> (u64, u64) {
    let grids = supported_grids(max_tiles);
    // torch divides the integer resolutions by the image's sides in float32.
    let scale = |(rows, cols): (u64, u64)| {
        let sh = (rows * tile) as f32 / height.max(1) as f32;
        let sw = (cols * tile) as f32 / width.max(1) as f32;
        if sh > sw {
            sw
        } else {
            sh
        }
    };
    let scales: Vec<f32> = grids.iter().map(|&g| scale(g)).collect();
    let up = scales.iter().copied().filter(|&s| s >= 1.0).reduce(f32::min);
    let selected = up.unwrap_or_else(|| scales.iter().copied().filter(|&s| s < 1.0).fold(f32::MIN, f32::max));
    let mut best: Option<(u64, u64)> = None;
    for (g, s) in grids.iter().zip(&scales) {
        if *s == selected && best.is_none_or(|b| g.0 * g.1 < b.0 * b.1) {
            best = Some(*g);
        }
    }
    best.unwrap_or((1, 1))
}

/// The tiles the tower reads for one image: the grid's, plus the global tile when the grid has
/// more than one.
pub fn llama4_tiles(width: u64, height: u64, tile: u64, max_tiles: u64) -> u64 {
    let (rows, cols) = llama4_grid(width, height, tile, max_tiles);
    super::tiling::with_global_view(rows * cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The docstring's example of `find_supported_resolutions` (max_num_chunks 4): ratios in
    /// first-seen order, 1/4, 1 (2 × 2 then 1 × 1), 4, 1/3, 3, 1/2, 2.
    #[test]
    fn grids_in_the_processors_order() {
        assert_eq!(supported_grids(4), vec![(1, 4), (2, 2), (1, 1), (4, 1), (1, 3), (3, 1), (1, 2), (2, 1)]);
    }
}
