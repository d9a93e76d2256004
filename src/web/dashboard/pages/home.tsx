import { useEffect } from "preact/hooks";
import { Link } from "wouter-preact";
import { api } from "../api";
import { useSession } from "../session";
import { ErrorNote, formatNumber, Loading, useAction, useAsync } from "../ui";

/** The onboarding steps, stored under these keys in the account's `onboarding_checklist_status`. */
const STEPS = [
  { key: "key_created", label: "Create an API key for your shop", href: "/keys" },
  { key: "catalogue_ingested", label: "Send your catalogue", href: "/data/upload" },
  { key: "first_training", label: "Train a first model", href: "/training" },
  { key: "first_recommendation", label: "Serve a first recommendation", href: "/playground" },
  { key: "widget_installed", label: "Install the widget on your shop", href: null },
] as const;

type StepKey = (typeof STEPS)[number]["key"];

export function HomePage() {
  const { account, setAccount } = useSession();
  const facts = useAsync(async () => {
    const [status, model, usage, keys] = await Promise.all([
      api.sandboxStatus(),
      api.currentModel(),
      api.usageSummary(),
      api.listKeys(),
    ]);
    return { counts: status.counts, model, usage, keys };
  }, []);
  const stored = account.onboarding_checklist_status;
  const save = useAction(async (changes: Partial<Record<StepKey, boolean>>) => {
    setAccount(await api.updateChecklist(changes));
  });

  // What the account's data already shows is ticked (and stored) without asking, including the key sign-up
  // made; the widget cannot be seen from here, so that step is ticked by hand.
  const observed: Partial<Record<StepKey, boolean>> = {};
  if (facts.data !== undefined) {
    const { counts, model, usage, keys } = facts.data;
    if (keys.length > 0) observed.key_created = true;
    if (counts.products > 0) observed.catalogue_ingested = true;
    if (model !== null) observed.first_training = true;
    if (usage.month.recommendations > 0) observed.first_recommendation = true;
  }
  const missing = Object.fromEntries(Object.entries(observed).filter(([key]) => stored[key] !== true));
  const missingKeys = Object.keys(missing).join(",");
  useEffect(() => {
    if (missingKeys !== "" && !save.busy) void save.run(missing);
  }, [missingKeys]);

  const done = (key: StepKey) => stored[key] === true || observed[key] === true;
  return (
    <>
      <h1 tabIndex={-1}>Welcome, {account.name}</h1>
      <section class="card" aria-labelledby="checklist-title">
        <h2 id="checklist-title">Getting started</h2>
        <ul class="checklist">
          {STEPS.map((step) => (
            <li key={step.key}>
              <label class="inline">
                <input
                  type="checkbox"
                  checked={done(step.key)}
                  disabled={step.href !== null || save.busy}
                  onChange={(event) => void save.run({ [step.key]: event.currentTarget.checked })}
                />
                {step.href === null ? step.label : <Link href={step.href}>{step.label}</Link>}
              </label>
            </li>
          ))}
        </ul>
        <ErrorNote error={save.error} />
      </section>
      <ErrorNote error={facts.error} />
      {facts.data === undefined ? (
        facts.error === undefined && <Loading what="your figures" />
      ) : (
        <>
          <div class="grid">
            <Stat label="Products" value={facts.data.counts.products} />
            <Stat label="End users" value={facts.data.counts.endUsers} />
            <Stat label="Interactions" value={facts.data.counts.interactions} />
          </div>
          <section class="card" aria-labelledby="quality-title">
            <h2 id="quality-title">Current model</h2>
            {facts.data.model === null ? (
              <p>
                No model trained yet. <Link href="/training">Start a training</Link> once your catalogue and
                interactions are in, or load the demo data from <Link href="/usage">Usage and plan</Link>.
              </p>
            ) : (
              <ModelQuality
                version={facts.data.model.version}
                published={facts.data.model.isPublished}
                ndcg={facts.data.model.metrics.ndcgAt10}
                baseline={facts.data.model.metrics.popularityNdcgAt10}
              />
            )}
          </section>
        </>
      )}
    </>
  );
}

function Stat({ label, value }: { label: string; value: number }) {
  return (
    <div class="card">
      <div class="muted">{label}</div>
      <div class="stat">{value.toLocaleString()}</div>
    </div>
  );
}

function ModelQuality(props: {
  version: number;
  published: boolean;
  ndcg: number | null;
  baseline: number | null;
}) {
  const lift =
    props.ndcg !== null && props.baseline !== null && props.baseline > 0
      ? `${(((props.ndcg - props.baseline) / props.baseline) * 100).toFixed(0)}%`
      : null;
  return (
    <>
      <p>
        Version {props.version}{" "}
        {props.published ? <span class="badge ok">published</span> : <span class="badge">not published</span>}
      </p>
      <div class="grid">
        <div>
          <div class="muted">NDCG@10 of this model</div>
          <div class="stat">{formatNumber(props.ndcg)}</div>
        </div>
        <div>
          <div class="muted">NDCG@10 of the popularity baseline</div>
          <div class="stat">{formatNumber(props.baseline)}</div>
        </div>
        {lift !== null && (
          <div>
            <div class="muted">Against the baseline</div>
            <div class="stat">{lift.startsWith("-") ? lift : `+${lift}`}</div>
          </div>
        )}
      </div>
    </>
  );
}
