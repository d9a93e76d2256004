/** One end user on the Data page: their profile, recent history, export (right of access) and erasure. */
import { useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { api, type Interaction } from "../api";
import { useRecordId } from "../paths";
import { Confirm, ErrorNote, formatDate, Loading, useAction, useAsync } from "../ui";

/** How many interactions the history table shows; the export holds them all. */
export const HISTORY_ROWS = 200;

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

/** A file name for an id that may hold "/", "?", spaces or any other character. */
const fileNameOf = (id: string): string => `end-user-${id.replace(/[^\p{L}\p{N}._-]+/gu, "_")}.json`;

export function EndUserDetail() {
  const id = useRecordId();
  const [, navigate] = useLocation();
  // The export carries the user's whole history (interactions, searches, orders, recommendations shown).
  const data = useAsync(() => api.exportEndUser(id), [id]);
  const [erasing, setErasing] = useState(false);
  const [erased, setErased] = useState<string | null>(null);
  const exportNow = useAction(async () => {
    const fresh = await api.exportEndUser(id);
    download(fileNameOf(id), fresh);
  });
  const erase = useAction(async () => {
    const result = await api.eraseEndUser(id).catch((error: unknown) => {
      // The page reads the end user again: it shows what is stored, however far the erasure got.
      data.reload();
      throw error;
    });
    setErasing(false);
    const { interactions, searches, recommendations, orders } = result.deleted;
    setErased(
      `${result.externalId} was erased: ${interactions.toLocaleString()} interactions, ` +
        `${searches.toLocaleString()} searches, ${recommendations.toLocaleString()} recommendation logs and ` +
        `${orders.toLocaleString()} orders deleted.`,
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
              <button
                type="button"
                class="danger"
                onClick={() => {
                  erase.clear();
                  setErasing(true);
                }}
              >
                Erase this end user
              </button>
            </p>
            <ErrorNote error={exportNow.error} />
          </section>
          <History interactions={data.data.interactions} />
        </>
      )}
      <Confirm
        open={erasing}
        title={`Erase end user ${id}?`}
        confirmLabel="Erase for good"
        typed={id}
        busy={erase.busy}
        error={erase.error}
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

/** The latest interactions, newest first, as the export lists them. */
function History({ interactions }: { interactions: Interaction[] }) {
  const shown = interactions.slice(0, HISTORY_ROWS);
  const hidden = interactions.length - shown.length;
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History ({interactions.length.toLocaleString()} interactions)</h2>
      {hidden > 0 && (
        <p class="muted" data-testid="history-hidden">
          The latest {shown.length.toLocaleString()} are shown, newest first; {hidden.toLocaleString()} older{" "}
          {hidden === 1 ? "one is" : "ones are"} in the export.
        </p>
      )}
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
            {shown.map((interaction) => (
              <tr key={interaction.id}>
                <td>{formatDate(interaction.timestamp)}</td>
                <td>{interaction.interaction_type}</td>
                <td>
                  <Link href={`/data/products/${encodeURIComponent(interaction.external_product_id)}`}>
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
  );
}
