//! LLaVA-NeXT's "anyres" images: which grid of tiles an image becomes and how many tokens the
//! language model reads for it.
//!
//! The image processor (`image_processing_llava_next.py`) picks, of `image_grid_pinpoints`,
//! the resolution that keeps the most of the image's pixels and then wastes the fewest
//! (`image_processing_utils.py` `select_best_resolution`), resizes and pads the image to it
//! and cuts it into tiles of the tower's `image_size`, after the base image (the whole image at
//! one tile). The model (`modeling_llava_next.py` `pack_image_features`, and the processor's
//! own count, `processing_llava_next.py` `_get_number_of_features`) keeps the base tile's
//! patches, lays the grid's patch features out as one picture, cuts away the rows or columns
//! the padding added (`unpad_image`), and ends each row with `image_newline`.

/// `select_best_resolution` on `(height, width)`: of the pinpoints (`[height, width]`), the one
/// with the largest effective resolution (the image's pixels kept after scaling it to fit),
/// then the smallest waste; the first in the list on a full tie.
fn best_resolution(height: f64, width: f64, pinpoints: &[[u64; 2]]) -> (f64, f64) {
    let mut best = (0.0, 0.0);
    let (mut max_effective, mut min_wasted) = (0.0, f64::INFINITY);
    for &[h, w] in pinpoints {
        let (h, w) = (h as f64, w as f64);
        let scale = (w / width).min(h / height);
        let (dw, dh) = ((width * scale).trunc(), (height * scale).trunc());
        let effective = (dw * dh).min(width * height);
        let wasted = w * h - effective;
        if effective > max_effective || (effective == max_effective && wasted < min_wasted) {
            max_effective = effective;
            min_wasted = wasted;
            best = (h, w);
        }
    }
    best
}

/// Tiles the tower reads for one `width × height` image: the base image and the best
/// pinpoint's grid of `tile`-px crops.
pub fn anyres_tiles(width: u64, height: u64, pinpoints: &[[u64; 2]], tile: u64) -> u64 {
    let (h, w) = best_resolution(height.max(1) as f64, width.max(1) as f64, pinpoints);
    let t = tile.max(1) as f64;
    ((h / t).floor() * (w / t).floor()) as u64 + 1
}

/// Python's `int(round(x, 7))` for the non-negative sizes `unpad_image` rounds.
fn round7(x: f64) -> f64 {
    ((x * 1e7).round() / 1e7).trunc()
}

/// Language-model tokens of one `width × height` image with the "default" feature selection:
/// the base tile's `side²` patches, then the grid's `(side · rows) × (side · cols)` patch
/// features without the padding's rows or columns, plus one newline per remaining row.
pub fn anyres_tokens(width: u64, height: u64, pinpoints: &[[u64; 2]], tile: u64, side: u64) -> u64 {
    let (height, width) = (height.max(1) as f64, width.max(1) as f64);
    let (best_h, best_w) = best_resolution(height, width, pinpoints);
    let t = tile.max(1) as f64;
    let s = side as f64;
    let (mut cur_h, mut cur_w) = (s * (best_h / t).floor(), s * (best_w / t).floor());
    if width / height > cur_w / cur_h {
        let new_h = round7(height * (cur_w / width));
        cur_h -= 2.0 * ((cur_h - new_h) / 2.0).floor();
    } else {
        let new_w = round7(width * (cur_h / height));
        cur_w -= 2.0 * ((cur_w - new_w) / 2.0).floor();
    }
    (s * s + cur_h * cur_w + cur_h) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINPOINTS: [[u64; 2]; 5] = [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]];

    /// LLaVA-v1.6's pinpoints and 336-px CLIP (24 × 24 patches), as measured in
    /// `vlm_image_tokens.json`: a 336-px square fits 336 × 672 (2 tiles and the base, 576 +
    /// 24 × 24 + 24 = 1176 tokens), 1024 px fits 672 × 672 (2928 = 576 + 48 × 48 + 48); 1280 × 720
    /// loses 10 padded rows on each side of 48 (576 + 28 · 48 + 28 = 1948).
    #[test]
    fn llava_next_tokens() {
        assert_eq!(anyres_tiles(336, 336, &PINPOINTS, 336), 3);
        assert_eq!(anyres_tokens(336, 336, &PINPOINTS, 336, 24), 1176);
        assert_eq!(anyres_tiles(1024, 1024, &PINPOINTS, 336), 5);
        assert_eq!(anyres_tokens(1024, 1024, &PINPOINTS, 336, 24), 2928);
        assert_eq!(anyres_tokens(1280, 720, &PINPOINTS, 336, 24), 1948);
    }
}
