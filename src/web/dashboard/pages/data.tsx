import { useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { api, type EndUser, type Product, type RecommendationPage } from "../api";
import { useRecordId } from "../paths";
import { type Async, ErrorNote, formatDate, Loading, useAsync } from "../ui";
import { EndUserDetail } from "./data-end-user";
import { Upload } from "./data-upload";

const PAGE_SIZE = 50;

export type DataView = "products" | "product" | "end-users" | "end-user" | "upload";

export function DataPage({ view }: { view: DataView }) {
  // A record's page belongs to its list's tab.
  const tab = (path: string, label: string, views: DataView[]) => (
    <Link href={path} aria-current={views.includes(view) ? "page" : undefined}>
      {label}
    </Link>
  );
  return (
    <>
      <h1 tabIndex={-1}>Data</h1>
      <nav class="tabs" aria-label="Data">
        {tab("/data", "Products", ["products", "product"])}
        {tab("/data/end-users", "End users", ["end-users", "end-user"])}
        {tab("/data/upload", "Upload a file", ["upload"])}
      </nav>
      {view === "products" && <ProductList />}
      {view === "product" && <ProductDetail />}
      {view === "end-users" && <EndUserList />}
      {view === "end-user" && <EndUserDetail />}
      {view === "upload" && <Upload />}
    </>
  );
}

/** Search: the loaded page is filtered as you type; Enter opens the record with exactly that id. */
function SearchBox(props: {
  label: string;
  value: string;
  onInput: (value: string) => void;
  onOpen: () => void;
}) {
  return (
    <form
      aria-label={props.label}
      class="row"
      onSubmit={(event) => {
        event.preventDefault();
        props.onOpen();
      }}
    >
      <label>
        {props.label}
        <input type="search" value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
      </label>
      <button type="submit" class="secondary">
        Open by id
      </button>
    </form>
  );
}

function Pager(props: { skip: number; total: number; onSkip: (skip: number) => void }) {
  const last = Math.min(props.skip + PAGE_SIZE, props.total);
  return (
    <p class="row">
      <span>
        {props.total === 0 ? 0 : (props.skip + 1).toLocaleString()}–{last.toLocaleString()} of{" "}
        {props.total.toLocaleString()}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={props.skip === 0}
        onClick={() => props.onSkip(Math.max(0, props.skip - PAGE_SIZE))}
      >
        Previous
      </button>
      <button
        type="button"
        class="secondary"
        disabled={last >= props.total}
        onClick={() => props.onSkip(props.skip + PAGE_SIZE)}
      >
        Next
      </button>
    </p>
  );
}

const matches = (needle: string, ...haystack: (string | null)[]): boolean =>
  needle === "" || haystack.some((one) => one?.toLowerCase().includes(needle.toLowerCase()));

function ProductList() {
  const [skip, setSkip] = useState(0);
  const [category, setCategory] = useState("");
  const [search, setSearch] = useState("");
  const [, navigate] = useLocation();
  const page = useAsync(
    () => api.listProducts({ skip, limit: PAGE_SIZE, category: category === "" ? undefined : category }),
    [skip, category],
  );
  const shown = (page.data?.items ?? []).filter((p: Product) =>
    matches(search, p.externalId, p.name, p.brand),
  );
  return (
    <section class="card" aria-label="Products">
      <div class="row">
        <SearchBox
          label="Search products (id, name, brand)"
          value={search}
          onInput={setSearch}
          onOpen={() => search !== "" && navigate(`/data/products/${encodeURIComponent(search)}`)}
        />
        <label>
          Category (includes sub-categories)
          <input
            value={category}
            onChange={(e) => {
              setSkip(0);
              setCategory(e.currentTarget.value);
            }}
          />
        </label>
      </div>
      <ErrorNote error={page.error} />
      {page.data === undefined ? (
        page.error === undefined && <Loading what="products" />
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Product</th>
                  <th scope="col">Category</th>
                  <th scope="col">Price</th>
                  <th scope="col">In stock</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((product) => (
                  <tr key={product.externalId}>
                    <td>
                      <Link href={`/data/products/${encodeURIComponent(product.externalId)}`}>
                        {product.name}
                      </Link>
                      <div class="muted">{product.externalId}</div>
                    </td>
                    <td>{product.category}</td>
                    <td>{product.price}</td>
                    <td>{product.inStock ? "yes" : "no"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager skip={skip} total={page.data.total} onSkip={setSkip} />
        </>
      )}
    </section>
  );
}

function ProductDetail() {
  const id = useRecordId();
  const product = useAsync(() => api.product(id), [id]);
  const similar = useAsync(() => api.similarProducts(id), [id]);
  return (
    <>
      <ErrorNote error={product.error} />
      {product.data !== undefined && (
        <section class="card" aria-labelledby="product-title">
          <h2 id="product-title">{product.data.name}</h2>
          <dl>
            <dt>Id</dt>
            <dd>{product.data.externalId}</dd>
            <dt>Category</dt>
            <dd>{product.data.category}</dd>
            <dt>Brand</dt>
            <dd>{product.data.brand ?? "—"}</dd>
            <dt>Price</dt>
            <dd>{product.data.price}</dd>
            <dt>In stock</dt>
            <dd>{product.data.inStock ? "yes" : "no"}</dd>
          </dl>
          {product.data.description !== null && <p>{product.data.description}</p>}
        </section>
      )}
      {/* An unknown product has no similar products: its "not found" is said once, above. */}
      {product.error === undefined && <Similar similar={similar} />}
    </>
  );
}

function Similar({ similar }: { similar: Async<RecommendationPage> }) {
  return (
    <section class="card" aria-labelledby="similar-title">
      <h2 id="similar-title">Similar products</h2>
      <ErrorNote error={similar.error} />
      {similar.data === undefined ? (
        similar.error === undefined && <Loading what="similar products" />
      ) : similar.data.items.length === 0 ? (
        <p>None yet: similar products come from the trained model and the catalogue.</p>
      ) : (
        <ul class="cards">
          {similar.data.items.map((item) => (
            <li key={item.externalId}>
              <Link href={`/data/products/${encodeURIComponent(item.externalId)}`}>{item.name}</Link>
              <div class="muted">
                {item.source} · score {item.score.toFixed(3)}
              </div>
              {item.explanation !== undefined && <div>{item.explanation}</div>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function EndUserList() {
  const [skip, setSkip] = useState(0);
  const [search, setSearch] = useState("");
  const [, navigate] = useLocation();
  const page = useAsync(() => api.listEndUsers({ skip, limit: PAGE_SIZE }), [skip]);
  const shown = (page.data?.items ?? []).filter((user: EndUser) =>
    matches(search, user.externalId, ...user.preferredCategories),
  );
  return (
    <section class="card" aria-label="End users">
      <SearchBox
        label="Search end users (id, favourite category)"
        value={search}
        onInput={setSearch}
        onOpen={() => search !== "" && navigate(`/data/end-users/${encodeURIComponent(search)}`)}
      />
      <ErrorNote error={page.error} />
      {page.data === undefined ? (
        page.error === undefined && <Loading what="end users" />
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">End user</th>
                  <th scope="col">Favourite categories</th>
                  <th scope="col">Since</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((user) => (
                  <tr key={user.externalId}>
                    <td>
                      <Link href={`/data/end-users/${encodeURIComponent(user.externalId)}`}>
                        {user.externalId}
                      </Link>
                    </td>
                    <td>{user.preferredCategories.join(", ") || "—"}</td>
                    <td>{formatDate(user.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager skip={skip} total={page.data.total} onSkip={setSkip} />
        </>
      )}
    </section>
  );
}
