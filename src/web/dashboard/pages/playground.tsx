import { useState } from "preact/hooks";
import { useSearch } from "wouter-preact";
import { api, apiUrl, type PersonalizedQuery, type Preset, type RecommendationPage } from "../api";
import { CopyButton, ErrorNote, useAction, useAsync } from "../ui";

/** Sent as the end user when none is picked: an id with no history, answered like a first-time visitor. */
const ANONYMOUS = "anonymous-visitor";

const STRATEGIES = ["hybrid", "collab", "content_based", "popularity"] as const;
const GOALS = ["user_engagement", "conversion", "revenue", "discovery"] as const;
const VARIANTS = ["standard", "diverse"] as const;
const PRESETS = ["homepage", "product-page", "cart", "checkout"] as const;
const OPS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains"] as const;
const FIELDS = ["category", "price", "brand", "in_stock", "rating"] as const;

interface FilterRow {
  field: string;
  op: (typeof OPS)[number];
  value: string;
}

interface PlannedRequest {
  method: "POST";
  path: string;
  query: Record<string, string | string[]>;
  body: Record<string, unknown>;
}

/** A filter value as typed: lists for in/nin, numbers and booleans where they parse as such. */
function filterValue(row: FilterRow): unknown {
  const one = (text: string): unknown => {
    const trimmed = text.trim();
    if (trimmed === "true" || trimmed === "false") return trimmed === "true";
    return trimmed !== "" &&
      Number.isFinite(Number(trimmed)) &&
      row.field !== "category" &&
      row.field !== "brand"
      ? Number(trimmed)
      : trimmed;
  };
  return row.op === "in" || row.op === "nin" ? row.value.split(",").map(one) : one(row.value);
}

export function PlaygroundPage() {
  const users = useAsync(() => api.listEndUsers({ limit: 100 }), []);
  // The sandbox links here with a demo end user picked (?user=…).
  const [user, setUser] = useState(new URLSearchParams(useSearch()).get("user") ?? "");
  const [preset, setPreset] = useState<"" | Preset>("");
  const [strategy, setStrategy] = useState<(typeof STRATEGIES)[number]>("hybrid");
  const [goal, setGoal] = useState<(typeof GOALS)[number]>("user_engagement");
  const [variant, setVariant] = useState<(typeof VARIANTS)[number]>("standard");
  const [limit, setLimit] = useState(8);
  const [pageType, setPageType] = useState("");
  const [device, setDevice] = useState("");
  const [sourceProduct, setSourceProduct] = useState("");
  const [presetProducts, setPresetProducts] = useState("");
  const [orderValue, setOrderValue] = useState("100");
  const [logic, setLogic] = useState<"and" | "or">("and");
  const [filters, setFilters] = useState<FilterRow[]>([]);
  const [answer, setAnswer] = useState<RecommendationPage | null>(null);
  const [sent, setSent] = useState<PlannedRequest | null>(null);

  const plan = (): PlannedRequest => {
    const externalUserId = user.trim() === "" ? ANONYMOUS : user.trim();
    if (preset !== "") {
      const query: Record<string, string | string[]> = {};
      const ids = presetProducts
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id !== "");
      if (preset === "product-page") query.current_product_id = ids[0] ?? "";
      if (preset === "cart") query.cart_items = ids;
      if (preset === "checkout") query.order_value = orderValue;
      return {
        method: "POST",
        path: `/recommendations/ecommerce/${preset}`,
        query,
        body: { external_user_id: externalUserId, limit },
      };
    }
    const body: PersonalizedQuery = {
      external_user_id: externalUserId,
      strategy,
      recommendation_goal: goal,
      model_variant: variant,
      include_explanation: true,
      limit,
    };
    const context: NonNullable<PersonalizedQuery["context"]> = {};
    if (pageType !== "") context.page_type = pageType as "home";
    if (device !== "") context.device = device as "mobile";
    if (sourceProduct.trim() !== "") context.source_external_product_id = sourceProduct.trim();
    if (Object.keys(context).length > 0) body.context = context;
    if (filters.length > 0) {
      body.filters = {
        logic,
        filters: filters.map((row) => ({ field: row.field, op: row.op, value: filterValue(row) })),
      } as PersonalizedQuery["filters"];
    }
    return { method: "POST", path: "/recommendations/personalized/query", query: {}, body };
  };

  const ask = useAction(async () => {
    const request = plan();
    setSent(request);
    // The last answer goes: under this question's error it would read as this question's answer.
    setAnswer(null);
    const page =
      preset === ""
        ? await api.personalized(request.body as PersonalizedQuery)
        : await api.preset(
            preset,
            request.body as { external_user_id: string; limit: number },
            request.query,
          );
    setAnswer(page);
  });

  const setFilter = (at: number, change: Partial<FilterRow>) =>
    setFilters(filters.map((row, i) => (i === at ? { ...row, ...change } : row)));

  return (
    <>
      <h1 tabIndex={-1}>Playground</h1>
      <p class="muted">
        Ask for recommendations as your shop would and see what an end user gets, with the exact request to
        copy into your code.
      </p>
      <form
        class="card"
        aria-label="Recommendation request"
        onSubmit={(event) => {
          event.preventDefault();
          void ask.run();
        }}
      >
        <div class="row">
          <label>
            End user (empty: a visitor without history)
            <input list="playground-users" value={user} onInput={(e) => setUser(e.currentTarget.value)} />
            <datalist id="playground-users">
              {users.data?.items.map((one) => (
                <option key={one.externalId} value={one.externalId} />
              ))}
            </datalist>
          </label>
          <label>
            Preset
            <select value={preset} onChange={(e) => setPreset(e.currentTarget.value as "" | Preset)}>
              <option value="">None (personalised query)</option>
              {PRESETS.map((one) => (
                <option key={one} value={one}>
                  {one}
                </option>
              ))}
            </select>
          </label>
          <label>
            How many
            <input
              type="number"
              min={1}
              max={100}
              value={limit}
              onInput={(e) => setLimit(Number(e.currentTarget.value))}
            />
          </label>
        </div>
        {preset === "" ? (
          <>
            <div class="row">
              <Choice label="Strategy" value={strategy} options={STRATEGIES} onChange={setStrategy} />
              <Choice label="Goal" value={goal} options={GOALS} onChange={setGoal} />
              <Choice label="Variant" value={variant} options={VARIANTS} onChange={setVariant} />
            </div>
            <fieldset>
              <legend>Context</legend>
              <div class="row">
                <Choice
                  label="Page type"
                  value={pageType}
                  options={["", "home", "product_detail", "cart"]}
                  onChange={setPageType}
                />
                <Choice
                  label="Device"
                  value={device}
                  options={["", "mobile", "desktop", "tablet"]}
                  onChange={setDevice}
                />
                <label>
                  Product being viewed (id)
                  <input value={sourceProduct} onInput={(e) => setSourceProduct(e.currentTarget.value)} />
                </label>
              </div>
            </fieldset>
            <fieldset>
              <legend>Filters</legend>
              {filters.length > 1 && (
                <Choice
                  label="Combine with"
                  value={logic}
                  options={["and", "or"] as const}
                  onChange={setLogic}
                />
              )}
              {filters.map((row, at) => (
                <div class="row" key={at}>
                  <label>
                    Field
                    <input
                      list="filter-fields"
                      value={row.field}
                      onInput={(e) => setFilter(at, { field: e.currentTarget.value })}
                    />
                  </label>
                  <Choice
                    label="Operator"
                    value={row.op}
                    options={OPS}
                    onChange={(op) => setFilter(at, { op })}
                  />
                  <label>
                    Value {row.op === "in" || row.op === "nin" ? "(comma separated)" : ""}
                    <input
                      value={row.value}
                      onInput={(e) => setFilter(at, { value: e.currentTarget.value })}
                    />
                  </label>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => setFilters(filters.filter((_, i) => i !== at))}
                  >
                    Remove filter {at + 1}
                  </button>
                </div>
              ))}
              <datalist id="filter-fields">
                {FIELDS.map((field) => (
                  <option key={field} value={field} />
                ))}
              </datalist>
              <button
                type="button"
                class="secondary"
                onClick={() => setFilters([...filters, { field: "category", op: "eq", value: "" }])}
              >
                Add a filter
              </button>
            </fieldset>
          </>
        ) : (
          <div class="row">
            {(preset === "product-page" || preset === "cart") && (
              <label>
                {preset === "cart"
                  ? "Products in the cart (ids, comma separated)"
                  : "Product being viewed (id)"}
                <input
                  value={presetProducts}
                  onInput={(e) => setPresetProducts(e.currentTarget.value)}
                  required
                />
              </label>
            )}
            {preset === "checkout" && (
              <label>
                Order value
                <input
                  type="number"
                  min={0}
                  step="0.01"
                  value={orderValue}
                  onInput={(e) => setOrderValue(e.currentTarget.value)}
                />
              </label>
            )}
          </div>
        )}
        <p>
          <button type="submit" disabled={ask.busy}>
            Get recommendations
          </button>
        </p>
        <ErrorNote error={ask.error} />
      </form>
      {answer !== null && (
        <section class="card" aria-labelledby="answer-title">
          <h2 id="answer-title">Answer ({answer.items.length})</h2>
          {answer.items.length === 0 ? (
            <p>Nothing to recommend with these settings.</p>
          ) : (
            <ol class="cards" data-testid="recommendations">
              {answer.items.map((item) => (
                <li key={item.externalId}>
                  <strong>{item.name}</strong>
                  <div class="muted">{item.externalId}</div>
                  <div>
                    <span class="badge">{item.source}</span> score {item.score.toFixed(3)}
                  </div>
                  {item.explanation !== undefined && <div data-testid="explanation">{item.explanation}</div>}
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
      {sent !== null && <Snippets request={sent} />}
    </>
  );
}

function Choice<T extends string>(props: {
  label: string;
  value: T;
  options: readonly T[];
  onChange: (value: T) => void;
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T)}>
        {props.options.map((option) => (
          <option key={option} value={option}>
            {option === "" ? "—" : option}
          </option>
        ))}
      </select>
    </label>
  );
}

const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

function Snippets({ request }: { request: PlannedRequest }) {
  const url = `${location.origin}${apiUrl(request.path, request.query)}`;
  const json = JSON.stringify(request.body, null, 2);
  const curl = [
    `curl -X ${request.method} ${shellQuote(url)} \\`,
    `  -H "X-API-Key: $RS_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d ${shellQuote(JSON.stringify(request.body))}`,
  ].join("\n");
  const typescript = [
    `const response = await fetch(${JSON.stringify(url)}, {`,
    `  method: "${request.method}",`,
    `  headers: { "X-API-Key": process.env.RS_API_KEY!, "Content-Type": "application/json" },`,
    `  body: JSON.stringify(${json.replaceAll("\n", "\n  ")}),`,
    "});",
    "if (!response.ok) throw new Error((await response.json()).message);",
    "const { items } = await response.json();",
  ].join("\n");
  return (
    <section class="card" aria-labelledby="snippets-title">
      <h2 id="snippets-title">The request</h2>
      <h3>curl</h3>
      <pre>
        <code>{curl}</code>
      </pre>
      <CopyButton text={curl} label="Copy the curl command" />
      <h3>TypeScript</h3>
      <pre>
        <code>{typescript}</code>
      </pre>
      <CopyButton text={typescript} label="Copy the TypeScript snippet" />
    </section>
  );
}
