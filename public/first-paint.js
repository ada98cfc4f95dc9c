// The first paint in index.html (#first-paint, src/first_paint.rs) is the default planner's:
// an address with a query may carry another scenario, view or the embed, so the copy is
// hidden there before the body is parsed (the app draws the real page when it starts).
//
// `headroomFirstPaint` resolves once the copy's largest text has been painted and reported
// (a largest-contentful-paint entry), or at once where there is nothing to wait for; the app
// mounts after it (src/ui/mod.rs). Chrome drops the paint record of a node removed before
// the record is reported, so a copy replaced at once on a fast link would leave the page's
// own headline, painted later, as the largest paint. Never more than a second.
if (location.search.length > 1) document.documentElement.classList.add('no-first-paint');
window.headroomFirstPaint = new Promise((resolve) => {
  if (location.search.length > 1 || !window.PerformanceObserver?.supportedEntryTypes?.includes('largest-contentful-paint')) return resolve();
  new PerformanceObserver((_, observer) => {
    observer.disconnect();
    resolve();
  }).observe({ type: 'largest-contentful-paint', buffered: true });
  setTimeout(resolve, 1000);
});
