/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/**
 * The drop-in recommendations widget (`GET /widget.js`). A shop pastes
 *
 *   <script src="https://recs.example/widget.js" data-key="pk_live_…" async></script>
 *   <div data-recs="homepage" data-user="u42"></div>
 *
 * and every `[data-recs]` element becomes a carousel of recommended products. It talks only to the service
 * the script came from, with the publishable key; it loads nothing else (no fonts, no analytics). When
 * anything fails the page is left as it was and one console warning says why.
 *
 * Element attributes: `data-recs` (homepage | product-page | cart | checkout | personalized), `data-user`
 * (the shop's end-user id; an anonymous id kept in localStorage otherwise), `data-product` (product-page),
 * `data-cart` (cart: comma-separated product ids), `data-order-value` (checkout), `data-limit`,
 * `data-title`, `data-currency` (ISO 4217 code for prices).
 */
import { WIDGET_CSS } from "./style";

type Mode = "homepage" | "product-page" | "cart" | "checkout" | "personalized";

interface Card {
  externalId: string;
  name: string;
  price: number;
  imageUrl: string | null;
  url: string | null;
}

interface Shown {
  recommendationId: string | undefined;
  cards: Card[];
}

const RECS = "/api/v1/recommendations";
const TITLES: Record<Mode, string> = {
  homepage: "Recommended for you",
  "product-page": "You may also like",
  cart: "Goes well with your cart",
  checkout: "Last-minute additions",
  personalized: "Picked for you",
};

const script = document.currentScript as HTMLScriptElement | null;
/** Elements already taken, kept aside so a failure leaves no trace (not even an attribute) on the page. */
const taken = new WeakSet<Element>();
let warned = false;

/** One warning per page, whatever failed: a broken widget must not flood a shop's console. */
function warn(reason: unknown): void {
  if (warned) return;
  warned = true;
  console.warn(
    `[recs widget] recommendations not shown: ${reason instanceof Error ? reason.message : reason}`,
  );
}

async function call<T>(api: string, key: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(api + path, {
    method: body === undefined ? "GET" : "POST",
    headers:
      body === undefined ? { "X-API-Key": key } : { "X-API-Key": key, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
  });
  if (!response.ok) {
    const error = (await response.json().catch(() => ({}))) as { errorCode?: string; message?: string };
    throw new Error(`${response.status} ${error.errorCode ?? ""} ${error.message ?? ""}`.trim());
  }
  return (await response.json()) as T;
}

function anonymousUser(): string {
  const name = "recs-anonymous-id";
  try {
    let id = localStorage.getItem(name);
    if (id === null) {
      id = `anon-${crypto.randomUUID()}`;
      localStorage.setItem(name, id);
    }
    return id;
  } catch {
    return `anon-${crypto.randomUUID()}`;
  }
}

/** The route and body a mode asks; throws on a missing attribute (a shop's mistake worth one warning). */
function requestFor(element: HTMLElement, mode: Mode, user: string): { path: string; body: unknown } {
  const data = element.dataset;
  const limit = Number(data.limit);
  const body: Record<string, unknown> = { external_user_id: user };
  if (Number.isInteger(limit) && limit > 0) body.limit = limit;
  const query = new URLSearchParams();
  switch (mode) {
    case "homepage":
      return { path: `${RECS}/ecommerce/homepage`, body };
    case "personalized":
      // The route's own default page is 100; a widget shows a row, as the homepage preset's 12.
      return { path: `${RECS}/personalized/query`, body: { limit: 12, ...body } };
    case "product-page":
      if (!data.product) throw new Error('data-recs="product-page" needs data-product');
      query.set("current_product_id", data.product);
      return { path: `${RECS}/ecommerce/product-page?${query}`, body };
    case "cart":
      for (const id of (data.cart ?? "").split(",")) if (id.trim()) query.append("cart_items", id.trim());
      return { path: `${RECS}/ecommerce/cart?${query}`, body };
    case "checkout":
      if (data.orderValue) query.set("order_value", data.orderValue);
      return { path: `${RECS}/ecommerce/checkout?${query}`, body };
  }
}

async function fetchShown(api: string, key: string, element: HTMLElement, mode: Mode, user: string) {
  const { path, body } = requestFor(element, mode, user);
  const answer = await call<{ items: { externalId: string }[]; recommendationId?: string }>(
    api,
    key,
    path,
    body,
  );
  if (answer.items.length === 0) return { recommendationId: answer.recommendationId, cards: [] };
  const ids = new URLSearchParams();
  for (const item of answer.items) ids.append("ids", item.externalId);
  const { items } = await call<{ items: Card[] }>(api, key, `${RECS}/product-cards?${ids}`);
  return { recommendationId: answer.recommendationId, cards: items } satisfies Shown;
}

/** Only http(s) links and images: a catalogue attribute must never become a `javascript:` URL. */
function safeUrl(value: string | null): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value, location.href);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A CSS class per product, stable across page loads: `recs-item--` and the id reduced to [a-z0-9-]. */
function productClass(externalId: string): string {
  return `recs-item--${externalId.toLowerCase().replace(/[^a-z0-9-]+/g, "-")}`;
}

function formatPrice(price: number, currency: string | undefined): string {
  const locale = document.documentElement.lang || undefined;
  try {
    return new Intl.NumberFormat(locale, {
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
      ...(currency ? { style: "currency", currency } : {}),
    }).format(price);
  } catch {
    return price.toFixed(2);
  }
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  return node;
}

function render(element: HTMLElement, mode: Mode, shown: Shown, onClick: (card: Card) => void): void {
  const section = el("section", `recs-widget recs-widget--${mode}`);
  const title = element.dataset.title ?? TITLES[mode];
  const heading = el("h2", "recs-title");
  heading.textContent = title;
  heading.id = `recs-title-${Math.random().toString(36).slice(2, 10)}`;
  section.setAttribute("aria-labelledby", heading.id);
  section.setAttribute("aria-roledescription", "carousel");
  if (shown.recommendationId) section.dataset.recommendationId = shown.recommendationId;

  const track = el("ul", "recs-track");
  track.setAttribute("role", "list");
  track.tabIndex = 0;
  track.setAttribute("aria-label", title);
  shown.cards.forEach((card, index) => {
    const item = el("li", `recs-item ${productClass(card.externalId)}`);
    item.dataset.productId = card.externalId;
    item.setAttribute("aria-label", `${index + 1} of ${shown.cards.length}`);
    const href = safeUrl(card.url);
    const link = href === null ? el("div", "recs-link") : el("a", "recs-link");
    if (link instanceof HTMLAnchorElement && href !== null) link.href = href;
    const src = safeUrl(card.imageUrl);
    const figure = el("span", "recs-image-frame");
    if (src !== null) {
      const image = el("img", "recs-image");
      image.src = src;
      image.alt = "";
      image.loading = "lazy";
      image.decoding = "async";
      figure.append(image);
    }
    const name = el("span", "recs-name");
    name.textContent = card.name;
    const price = el("span", "recs-price");
    price.textContent = formatPrice(card.price, element.dataset.currency);
    link.append(figure, name, price);
    link.addEventListener("click", () => onClick(card));
    item.append(link);
    track.append(item);
  });

  const previous = el("button", "recs-nav recs-nav--previous");
  const next = el("button", "recs-nav recs-nav--next");
  for (const [button, label, direction] of [
    [previous, "Previous products", -1],
    [next, "Next products", 1],
  ] as const) {
    button.type = "button";
    button.setAttribute("aria-label", label);
    button.textContent = direction < 0 ? "\u2039" : "\u203a";
    button.addEventListener("click", () =>
      track.scrollBy({ left: direction * track.clientWidth * 0.8, behavior: "smooth" }),
    );
  }
  const viewport = el("div", "recs-viewport");
  viewport.append(previous, track, next);
  section.append(heading, viewport);
  element.replaceChildren(section);
  // Arrows only while the row is wider than its box: buttons that move nothing would confuse keyboard users.
  const fit = () => {
    const overflowing = track.scrollWidth > track.clientWidth + 1;
    previous.hidden = !overflowing;
    next.hidden = !overflowing;
  };
  fit();
  addEventListener("resize", fit, { passive: true });
}

function injectStyle(): void {
  if (document.getElementById("recs-widget-style") !== null) return;
  const style = document.createElement("style");
  style.id = "recs-widget-style";
  style.textContent = WIDGET_CSS;
  document.head.prepend(style);
}

/**
 * A click records a CLICK with the answer's recommendationId. `fetch` with `keepalive` (not `sendBeacon`,
 * which cannot send the X-API-Key header) outlives the page, so the link navigates at once.
 */
function recordClick(
  api: string,
  key: string,
  user: string,
  recommendationId: string | undefined,
  card: Card,
) {
  const body: Record<string, string> = {
    external_user_id: user,
    external_product_id: card.externalId,
    interaction_type: "CLICK",
  };
  if (recommendationId) body.recommendation_id = recommendationId;
  fetch(`${api}/api/v1/interactions/`, {
    method: "POST",
    keepalive: true,
    credentials: "omit",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify(body),
  }).catch(warn);
}

const MODES = new Set<string>(["homepage", "product-page", "cart", "checkout", "personalized"]);

async function mount(api: string, key: string, element: HTMLElement): Promise<void> {
  const mode = element.dataset.recs ?? "";
  if (!MODES.has(mode)) throw new Error(`unknown data-recs="${mode}"`);
  const user = element.dataset.user || anonymousUser();
  const shown = await fetchShown(api, key, element, mode as Mode, user);
  if (shown.cards.length === 0) return;
  injectStyle();
  render(element, mode as Mode, shown, (card) => recordClick(api, key, user, shown.recommendationId, card));
}

/** Mounts every `[data-recs]` element not yet mounted; exposed as `window.RecsWidget.refresh()`. */
function refresh(): void {
  try {
    const key = script?.dataset.key;
    if (!script || !key) throw new Error("the script tag needs data-key with a publishable key");
    const api = script.dataset.api ?? new URL(script.src).origin;
    for (const element of document.querySelectorAll<HTMLElement>("[data-recs]")) {
      if (taken.has(element)) continue;
      taken.add(element);
      mount(api, key, element).catch(warn);
    }
  } catch (error) {
    warn(error);
  }
}

(window as unknown as { RecsWidget: { refresh(): void } }).RecsWidget = { refresh };
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", refresh, { once: true });
else refresh();
