import { useState } from "preact/hooks";
import { type ApiKey, api, type CreatedApiKey } from "../api";
import { useSession } from "../session";
import { Confirm, CopyButton, ErrorNote, formatDate, Loading, useAction, useAsync } from "../ui";

const SCOPES = ["recommendations:read", "interactions:write"] as const;

export function KeysPage() {
  const keys = useAsync(() => api.listKeys(), []);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | "all" | null>(null);
  const revoke = useAction(async (target: ApiKey | "all") => {
    try {
      if (target === "all") await api.revokeAllKeys();
      else await api.revokeKey(target.id);
      setRevoking(null);
    } finally {
      // Also after a failure: the key may have been revoked elsewhere meanwhile.
      keys.reload();
    }
  });
  const closeRevoke = () => {
    setRevoking(null);
    revoke.clear();
  };
  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <p class="muted">
        Secret keys (<code>sk_live_…</code>) are for your servers. Publishable keys (<code>pk_live_…</code>)
        go in web pages: they may only ask for recommendations and record interactions, from your domains.
      </p>
      <CreateKey
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      {created !== null && (
        <section class="card" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new key “{created.name}”</h2>
          <p>Copy it now: it is shown this once and cannot be recovered.</p>
          <p class="secret" data-testid="new-key">
            {created.api_key}
          </p>
          <p class="row">
            <CopyButton text={created.api_key} label="Copy the key" />
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              I have saved it
            </button>
          </p>
        </section>
      )}
      <section class="card" aria-labelledby="keys-title">
        <h2 id="keys-title">Active keys</h2>
        <ErrorNote error={keys.error} />
        {keys.data === undefined ? (
          keys.error === undefined && <Loading what="keys" />
        ) : keys.data.length === 0 ? (
          <p>No active keys.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes and domains</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="muted">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td>{key.kind}</td>
                    <td>
                      <code>
                        {key.prefix}…{key.lastChars}
                      </code>
                    </td>
                    <td>
                      {key.kind === "secret" ? "everything" : key.scopes.join(", ")}
                      {key.allowedDomains.length > 0 && (
                        <div class="muted">{key.allowedDomains.join(", ")}</div>
                      )}
                    </td>
                    <td>{formatDate(key.created_at)}</td>
                    <td>{key.last_used_at === null ? "never" : formatDate(key.last_used_at)}</td>
                    <td>
                      <button type="button" class="secondary" onClick={() => setRevoking(key)}>
                        Revoke
                        <span class="muted" style={{ position: "absolute", left: "-9999px" }}>
                          {" "}
                          {key.name}
                        </span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {keys.data !== undefined && keys.data.length > 0 && (
          <p>
            <button type="button" class="danger" onClick={() => setRevoking("all")}>
              Revoke all keys
            </button>
          </p>
        )}
      </section>
      <Confirm
        open={revoking !== null}
        title={revoking === "all" ? "Revoke every key?" : `Revoke “${revoking?.name ?? ""}”?`}
        confirmLabel={revoking === "all" ? "Revoke all keys" : "Revoke the key"}
        typed={revoking === "all" ? "revoke all" : undefined}
        busy={revoke.busy}
        error={revoke.error}
        onConfirm={() => revoking !== null && void revoke.run(revoking)}
        onCancel={closeRevoke}
      >
        <p>
          {revoking === "all"
            ? "Every integration using any of your keys stops working at once. This cannot be undone."
            : "Calls made with this key are refused from now on. This cannot be undone."}
        </p>
      </Confirm>
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const { setAccount } = useSession();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"secret" | "publishable">("publishable");
  const [scopes, setScopes] = useState<string[]>([...SCOPES]);
  const [domains, setDomains] = useState("");
  const create = useAction(async () => {
    const allowedDomains = domains
      .split(/[\s,]+/)
      .map((domain) => domain.trim())
      .filter((domain) => domain !== "");
    const key = await api.createKey(
      kind === "secret"
        ? { name, kind }
        : { name, kind, scopes: scopes as (typeof SCOPES)[number][], allowedDomains },
    );
    // The secret is shown at once: it exists nowhere else, so nothing after this may stand in its way.
    setName("");
    onCreated(key);
    // The checklist tick is a convenience that Home also derives from the key list, so a refusal here is
    // not shown as a failure of the key.
    api.updateChecklist({ key_created: true }).then(setAccount, () => undefined);
  });
  return (
    <form
      class="card"
      aria-labelledby="create-key-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="create-key-title">Create a key</h2>
      <div class="row">
        <label>
          Name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={100} />
        </label>
        <fieldset>
          <legend>Kind</legend>
          {(["publishable", "secret"] as const).map((value) => (
            <label class="inline" key={value}>
              <input
                type="radio"
                name="kind"
                value={value}
                checked={kind === value}
                onChange={() => setKind(value)}
              />
              {value}
            </label>
          ))}
        </fieldset>
        {kind === "publishable" && (
          <>
            <fieldset>
              <legend>Scopes</legend>
              {SCOPES.map((scope) => (
                <label class="inline" key={scope}>
                  <input
                    type="checkbox"
                    checked={scopes.includes(scope)}
                    onChange={(e) =>
                      setScopes(
                        e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope),
                      )
                    }
                  />
                  {scope}
                </label>
              ))}
            </fieldset>
            <label>
              Allowed domains (comma separated, e.g. shop.com, *.shop.com)
              <input value={domains} onInput={(e) => setDomains(e.currentTarget.value)} />
            </label>
          </>
        )}
      </div>
      <ErrorNote error={create.error} />
      <p>
        <button type="submit" disabled={create.busy}>
          Create the key
        </button>
      </p>
    </form>
  );
}
