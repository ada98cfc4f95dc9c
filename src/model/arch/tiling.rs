//! How image processors cut one image into the tiles a fixed-size vision tower reads.
//!
//! Idefics3 and SmolVLM (`image_processing_idefics3.py`, `image_processing_smolvlm.py` of
//! transformers 5.25, the same algorithm in both and in their PIL backends): the image is
//! first resized so that its longest edge is `size.longest_edge` (up or down, the other side
//! `int(longest / aspect)` rounded up to even: `_resize_output_size_rescale_to_max_len`) and
//! kept within 4096 px (`_resize_output_size_scale_below_upper_bound`); then resized to
//! multiples of the tile side (`resize_for_vision_encoder`: the longer side rounded up to a
//! multiple, the other `int(longer / aspect)` rounded up to a multiple); `split_images` cuts
//! it into `rows × cols` tiles and adds the whole image resized to one tile (the "global"
//! view); an image that already fits one tile is that one tile alone.
//!
//! InternVL (`image_processing_got_ocr2.py` `get_optimal_tiled_canvas` and `crop_to_patches`,
//! the image processor `processing_internvl.py` runs with `crop_to_patches`): of the grids of
//! `cols × rows` tiles with 1 to `max_patches` tiles (ordered by tile count, then columns),
//! the one whose aspect ratio is closest to the image's; on a tie the larger grid while the
//! image's area exceeds half of the grid's; the image is resized to that grid and cut, and a
//! thumbnail (the whole image as one tile) is added when there is more than one tile.

/// `MAX_IMAGE_SIZE` of `image_processing_idefics3.py`: no side beyond 4096 px.
const MAX_IMAGE_SIZE: f64 = 4096.0;

/// `_resize_output_size_rescale_to_max_len`: the longest edge set to `max_len`, the other
/// kept in proportion (truncated, then made even), at least 1.
fn rescale_to_max_len(height: f64, width: f64, max_len: f64) -> (f64, f64) {
    let aspect = width / height;
    let even = |n: f64| if n % 2.0 != 0.0 { n + 1.0 } else { n };
    let (h, w) = if width >= height { (even((max_len / aspect).trunc()), max_len) } else { (max_len, even((max_len * aspect).trunc())) };
    (h.max(1.0), w.max(1.0))
}

/// `_resize_output_size_scale_below_upper_bound`: the longest edge brought down to
/// `max_len` when above it.
fn scale_below(height: f64, width: f64, max_len: f64) -> (f64, f64) {
    let aspect = width / height;
    let (mut h, mut w) = (height, width);
    if width >= height && width > max_len {
        w = max_len;
        h = (w / aspect).trunc();
    } else if height > width && height > max_len {
        h = max_len;
        w = (h * aspect).trunc();
    }
    (h.max(1.0), w.max(1.0))
}

/// `resize_for_vision_encoder`: both sides rounded up to multiples of `tile`, the shorter one
/// from the longer one's new length and the aspect ratio.
fn resize_for_vision_encoder(height: f64, width: f64, tile: f64) -> (f64, f64) {
    let aspect = width / height;
    if width >= height {
        let w = (width / tile).ceil() * tile;
        let h = ((w / aspect).trunc() / tile).ceil() * tile;
        (h, w)
    } else {
        let h = (height / tile).ceil() * tile;
        let w = ((h * aspect).trunc() / tile).ceil() * tile;
        (h, w)
    }
}

/// Tiles of one `width × height` image for Idefics3 / SmolVLM with image splitting on (the
/// processors' default): `rows · cols` crops of `tile` px and the global view, or one tile
/// when the resized image fits in one. `longest_edge` is the processor's `size.longest_edge`.
pub fn idefics3_tiles(width: u64, height: u64, longest_edge: u64, tile: u64) -> u64 {
    let (h, w) = rescale_to_max_len(height.max(1) as f64, width.max(1) as f64, longest_edge.max(1) as f64);
    let (h, w) = scale_below(h, w, MAX_IMAGE_SIZE);
    let t = tile.max(1) as f64;
    let (h, w) = resize_for_vision_encoder(h, w, t);
    if h > t || w > t {
        ((h / t).ceil() * (w / t).ceil()) as u64 + 1
    } else {
        1
    }
}

/// Tiles of one `width × height` image for InternVL: the grid closest to the image's aspect
/// ratio within `max_patches` tiles of `tile` px, and the thumbnail when the grid has more
/// than one tile.
pub fn internvl_tiles(width: u64, height: u64, tile: u64, max_patches: u64) -> u64 {
    if max_patches <= 1 {
        return 1;
    }
    let (w, h) = (width.max(1) as f64, height.max(1) as f64);
    let aspect = w / h;
    let area = w * h;
    let t = tile.max(1) as f64;
    // `get_all_supported_aspect_ratios(1, max)`: (cols, rows) with cols outer, sorted (stably)
    // by the tile count.
    let mut grids: Vec<(u64, u64)> = (1..=max_patches).flat_map(|c| (1..=max_patches).map(move |r| (c, r))).filter(|(c, r)| c * r <= max_patches).collect();
    grids.sort_by_key(|(c, r)| c * r);
    let mut best = (1, 1);
    let mut best_diff = f64::INFINITY;
    for (c, r) in grids {
        let diff = (aspect - c as f64 / r as f64).abs();
        if diff < best_diff {
            best_diff = diff;
            best = (c, r);
        } else if diff == best_diff && area > 0.5 * t * t * (c * r) as f64 {
            best = (c, r);
        }
    }
    with_global_view(best.0 * best.1)
}

/// A grid of `n` tiles and, when it has more than one, the whole image once more as a global
/// view (InternVL's thumbnail; Llama 4's global tile, `llama4_tiles.rs`).
pub(super) fn with_global_view(n: u64) -> u64 {
    if n > 1 {
        n + 1
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SmolVLM processor at `longest_edge` 2048 and 512-px tiles, as measured in
    /// `vlm_image_tokens.json` (checked there for every size): a square image is 4 × 4 tiles
    /// and the global view whatever its size; 1100 × 1000 rounds its short side up to 4 rows
    /// through `resize_for_vision_encoder` (1862 px → 2048); 4000 × 100 is 1 × 4 + 1.
    #[test]
    fn smolvlm_tiles() {
        assert_eq!(idefics3_tiles(1024, 1024, 2048, 512), 17);
        assert_eq!(idefics3_tiles(100, 100, 2048, 512), 17);
        assert_eq!(idefics3_tiles(1100, 1000, 2048, 512), 17);
        assert_eq!(idefics3_tiles(500, 300, 2048, 512), 13);
        assert_eq!(idefics3_tiles(4000, 100, 2048, 512), 5);
        assert_eq!(idefics3_tiles(512, 512, 512, 512), 1);
    }

    /// InternVL at 448-px tiles and 12 at most, as measured in `vlm_image_tokens.json`: a
    /// square image of 448 px is one tile; of 896 px, 2 × 2 and the thumbnail (the tie between
    /// 1 × 1 and 2 × 2 goes to the larger grid while the image covers half of it); 2:1 is 2 × 1.
    #[test]
    fn internvl_tiles_follow_the_aspect_ratio() {
        assert_eq!(internvl_tiles(448, 448, 448, 12), 1);
        assert_eq!(internvl_tiles(896, 896, 448, 12), 5);
        assert_eq!(internvl_tiles(896, 448, 448, 12), 3);
        assert_eq!(internvl_tiles(64, 32, 32, 12), 3);
        assert_eq!(internvl_tiles(896, 448, 448, 1), 1);
    }
}
