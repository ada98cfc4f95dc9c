//! The form controls every view uses: number fields and sliders, menus, checkboxes, bounded
//! text, and the error shown under a control (`field_error`).

pub(super) mod bounded_text;
pub(super) mod checkbox_field;
pub(super) mod field_error;
pub(super) mod number_field;
pub(super) mod number_slider;
pub(super) mod select_field;
