import { useState } from "preact/hooks";
import { Link, useLocation, useParams } from "wouter-preact";
import { api, type BatchJobStatus, type EndUser, type Product } from "../api";
import { Confirm, ErrorNote, formatDate, Loading, useAction, useAsync } from "../ui";
import { type RecordKind, readRecords, toBatches } from "../upload-file";

const PAGE_SIZE = 50;

export type DataView = "products" | "product" | "end-users" | "end-user" | "upload";

export function DataPage({ view }: { view: DataView }) {
  const [location] = useLocation();
  const tab = (path: string, label: string) => (
    <Link href={path} aria-current={location === path ? "page" : undefined}>
      {label}
    </Link>
  );
  return (
    <>
      <h1 tabIndex={-1}>Data</h1>
      <nav class="tabs" aria-label="Data">
        {tab("/data", "Products")}
        {tab("/data/end-users", "End users")}
        {tab("/data/upload", "Upload a file")}
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
        {props.total === 0 ? 0 : props.skip + 1}–{last} of {props.total}
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
  const { id } = useParams<{ id: string }>();
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
    </>
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

function download(name: string, value: unknown): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function EndUserDetail() {
  const { id } = useParams<{ id: string }>();
  const [, navigate] = useLocation();
  // The export carries the user's whole history (interactions, searches, orders, recommendations shown).
  const data = useAsync(() => api.exportEndUser(id), [id]);
  const [erasing, setErasing] = useState(false);
  const [erased, setErased] = useState<string | null>(null);
  const exportNow = useAction(async () => {
    const fresh = await api.exportEndUser(id);
    download(`end-user-${id}.json`, fresh);
  });
  const erase = useAction(async () => {
    const result = await api.eraseEndUser(id);
    setErasing(false);
    const { interactions, searches, recommendations, orders } = result.deleted;
    setErased(
      `${result.externalId} was erased: ${interactions} interactions, ${searches} searches, ` +
        `${recommendations} recommendation logs and ${orders} orders deleted.`,
    );
  });
  if (erased !== null) {
    return (
      <section class="card">
        <p class="notice" role="status">
          {erased}
        </p>
        <button type="button" class="secondary" onClick={() => navigate("/data/end-users")}>
          Back to the end users
        </button>
      </section>
    );
  }
  return (
    <>
      <ErrorNote error={data.error} />
      {data.data === undefined ? (
        data.error === undefined && <Loading what="the end user" />
      ) : (
        <>
          <section class="card" aria-labelledby="user-title">
            <h2 id="user-title">End user {data.data.endUser.externalId}</h2>
            <p>
              Favourite categories: {data.data.endUser.preferredCategories.join(", ") || "—"}. Price range:{" "}
              {data.data.endUser.priceRangeMin ?? "—"} to {data.data.endUser.priceRangeMax ?? "—"}.
            </p>
            <p class="row">
              <button type="button" onClick={() => void exportNow.run()} disabled={exportNow.busy}>
                Export (JSON)
              </button>
              <button type="button" class="danger" onClick={() => setErasing(true)}>
                Erase this end user
              </button>
            </p>
            <ErrorNote error={exportNow.error ?? erase.error} />
          </section>
          <section class="card" aria-labelledby="history-title">
            <h2 id="history-title">History ({data.data.interactions.length} interactions)</h2>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Type</th>
                    <th scope="col">Product</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {[...data.data.interactions]
                    .reverse()
                    .slice(0, 200)
                    .map((interaction) => (
                      <tr key={interaction.id}>
                        <td>{formatDate(interaction.timestamp)}</td>
                        <td>{interaction.interaction_type}</td>
                        <td>
                          <Link
                            href={`/data/products/${encodeURIComponent(interaction.external_product_id)}`}
                          >
                            {interaction.external_product_id}
                          </Link>
                        </td>
                        <td>{interaction.value}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          </section>
        </>
      )}
      <Confirm
        open={erasing}
        title={`Erase end user ${id}?`}
        confirmLabel="Erase for good"
        typed={id}
        onConfirm={() => void erase.run()}
        onCancel={() => setErasing(false)}
      >
        <p>
          The end user, their interactions, searches, orders and recommendation logs are deleted. The model
          forgets them at its next training. This cannot be undone.
        </p>
      </Confirm>
    </>
  );
}

interface UploadState {
  total: number;
  processed: number;
  jobs: BatchJobStatus[];
  done: boolean;
}

const processedOf = (job: BatchJobStatus): number =>
  job.processedProducts + job.processedUsers + job.processedInteractions;
const finished = (job: BatchJobStatus): boolean => job.status !== "processing";

function Upload() {
  const [kind, setKind] = useState<RecordKind>("products");
  const [file, setFile] = useState<File | null>(null);
  const [state, setState] = useState<UploadState | null>(null);
  const upload = useAction(async () => {
    if (file === null) throw new Error("Choose a CSV or JSON file first.");
    const records = readRecords(file.name, await file.text(), kind);
    if (records.length === 0) throw new Error(`${file.name} holds no records.`);
    const jobs: BatchJobStatus[] = [];
    const show = (done: boolean) =>
      setState({
        total: records.length,
        processed: jobs.reduce((n, job) => n + processedOf(job), 0),
        jobs: [...jobs],
        done,
      });
    show(false);
    // Batches go one after another: each is followed until its job finishes, so the bar moves steadily
    // and the bulk rate limit is not spent on a burst.
    for (const batch of toBatches(records)) {
      const accepted = await api.submitBatch({ [kind]: batch });
      let job = await api.batch(accepted.jobId);
      jobs.push(job);
      while (!finished(job)) {
        show(false);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        job = await api.batch(accepted.jobId);
        jobs[jobs.length - 1] = job;
      }
      show(false);
    }
    show(true);
  });
  const errors = state?.jobs.flatMap((job) => job.errors) ?? [];
  const failures = state?.jobs.filter((job) => job.status === "failed") ?? [];
  return (
    <section class="card" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a CSV or JSON file</h2>
      <p class="muted">
        CSV headers name the fields: products{" "}
        <code>externalId,name,price,category,brand,description,inStock</code>; end users{" "}
        <code>externalId,preferredCategories,priceRangeMin,priceRangeMax</code> (categories separated by{" "}
        <code>|</code>); interactions{" "}
        <code>external_user_id,external_product_id,interaction_type,value,timestamp</code>. Columns named{" "}
        <code>attributes.&lt;key&gt;</code> become attributes. JSON: an array of records, or an object with a{" "}
        <code>{kind}</code> array. Files are sent in batches of 1,000 records.
      </p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          void upload.run();
        }}
      >
        <label>
          What the file holds
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as RecordKind)}>
            <option value="products">Products</option>
            <option value="users">End users</option>
            <option value="interactions">Interactions</option>
          </select>
        </label>
        <label>
          File
          <input
            type="file"
            accept=".csv,.json,text/csv,application/json"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
        <button type="submit" disabled={upload.busy || file === null}>
          Upload
        </button>
      </form>
      <ErrorNote error={upload.error} />
      {state !== null && (
        <div aria-live="polite">
          <label>
            Progress: {state.processed} of {state.total} records
            <progress max={state.total} value={state.processed} />
          </label>
          {state.done && (
            <p class="notice" role="status" data-testid="upload-done">
              Upload finished:{" "}
              {state.jobs.map((job) => `job ${job.jobId} ${job.status.replaceAll("_", " ")}`).join(", ")}.
            </p>
          )}
          {failures.map((job) => (
            <p class="error" key={job.jobId}>
              Job {job.jobId} failed: {job.failureReason}
            </p>
          ))}
          {errors.length > 0 && (
            <div class="table-wrap">
              <table>
                <caption>Records that were not applied ({errors.length})</caption>
                <thead>
                  <tr>
                    <th scope="col">Kind</th>
                    <th scope="col">Id</th>
                    <th scope="col">Problem</th>
                  </tr>
                </thead>
                <tbody>
                  {errors.map((error, at) => (
                    <tr key={at}>
                      <td>{error.recordType}</td>
                      <td>{error.externalId}</td>
                      <td>{error.errorMessage}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
