// The first paint in index.html (#first-paint, src/first_paint.rs) is the default planner's:
// an address with a query may carry another scenario, view or the embed, so the copy is
// hidden there before the body is parsed (the app draws the real page when it starts).
if (location.search.length > 1) document.documentElement.classList.add('no-first-paint');
