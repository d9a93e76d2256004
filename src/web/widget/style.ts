/**
 * The widget's stylesheet, injected once as `<style id="recs-widget-style">` at the start of `<head>`, so
 * any rule of the shop's own wins. Every selector is wrapped in `:where()` (zero specificity) for the same
 * reason: a shop restyles `.recs-item`, `.recs-name`, `.recs-price` or `.recs-item--<product id>` with a
 * plain class selector. Cards keep one row; the row scrolls sideways (with snap points) when it is wider
 * than its container, so the page itself never overflows.
 */
export const WIDGET_CSS = `
:where(.recs-widget){font:inherit;color:inherit;margin:1.5rem 0;max-width:100%;box-sizing:border-box}
:where(.recs-widget *){box-sizing:border-box}
:where(.recs-title){font-size:1.15rem;font-weight:600;margin:0 0 .75rem}
:where(.recs-viewport){position:relative;display:flex;align-items:center;gap:.25rem;min-width:0}
:where(.recs-track){list-style:none;margin:0;padding:.25rem;display:flex;flex-wrap:nowrap;gap:1rem;overflow-x:auto;scroll-snap-type:x mandatory;scrollbar-width:thin;flex:1 1 auto;min-width:0;overscroll-behavior-x:contain}
:where(.recs-track:focus-visible){outline:2px solid currentColor;outline-offset:2px}
:where(.recs-item){flex:0 0 auto;width:clamp(9rem,40vw,12.5rem);scroll-snap-align:start}
:where(.recs-link){display:flex;flex-direction:column;gap:.35rem;color:inherit;text-decoration:none;height:100%;border-radius:.5rem;padding:.5rem;border:1px solid rgba(127,127,127,.25)}
:where(a.recs-link:hover .recs-name){text-decoration:underline}
:where(a.recs-link:focus-visible){outline:2px solid currentColor;outline-offset:2px}
:where(.recs-image-frame){display:block;aspect-ratio:1;width:100%;background:rgba(127,127,127,.08);border-radius:.35rem;overflow:hidden}
:where(.recs-image){display:block;width:100%;height:100%;object-fit:cover}
:where(.recs-name){font-size:.95rem;line-height:1.3;overflow:hidden;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical}
:where(.recs-price){font-weight:600}
:where(.recs-nav){flex:0 0 auto;width:2rem;height:2rem;border-radius:50%;border:1px solid rgba(127,127,127,.4);background:inherit;color:inherit;font-size:1.25rem;line-height:1;cursor:pointer;padding:0}
@media (max-width:40rem){:where(.recs-nav){display:none}}
@media (prefers-reduced-motion:reduce){:where(.recs-track){scroll-behavior:auto}}
`;
