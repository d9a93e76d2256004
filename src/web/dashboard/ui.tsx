/** Small building blocks shared by the pages: loading data, showing API errors, confirmations, charts. */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { ApiError } from "./api";

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on `reload`), keeping the last good answer while reloading. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!live) return;
        setError(failure);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** Calls `tick` every `ms` while `active`; the dashboard's live views poll the job routes this way. */
export function useInterval(tick: () => void, ms: number, active: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => latest.current(), ms);
    return () => clearInterval(timer);
  }, [ms, active]);
}

/** An API error as the sentence the service wrote, with the request id support asks for. */
export function ErrorNote({
  error,
  omit,
}: {
  error: unknown;
  /** Issues a form already shows next to their fields (see `fieldIssues`) are not listed again. */
  omit?: (loc: (string | number)[]) => boolean;
}) {
  if (error === undefined || error === null) return null;
  if (!(error instanceof ApiError)) {
    return (
      <div class="error" role="alert">
        {error instanceof Error ? error.message : String(error)}
      </div>
    );
  }
  const listed = omit === undefined ? error.detail : error.detail.filter((issue) => !omit(issue.loc));
  return (
    <div class="error" role="alert">
      <div>{error.message}</div>
      {error.retryAfter !== null && <div>You can try again {waitText(error.retryAfter)}.</div>}
      {listed.length > 0 && (
        <ul>
          {listed.map((issue) => (
            <li key={issue.loc.join(".")}>
              {issue.loc.slice(1).join(" › ")}: {issue.msg}
            </li>
          ))}
        </ul>
      )}
      {error.requestId !== null && <div class="request-id">Request id: {error.requestId}</div>}
    </div>
  );
}

/** Retry-After in words: "in 40 seconds", "in about 15 minutes", "in about 2 hours", "in about 9 days". */
export function waitText(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (seconds < 60) return `in ${plural(seconds, "second")}`;
  if (seconds < 3600) return `in about ${plural(Math.ceil(seconds / 60), "minute")}`;
  if (seconds < 172_800) return `in about ${plural(Math.round(seconds / 3600), "hour")}`;
  return `in about ${plural(Math.round(seconds / 86_400), "day")}`;
}

/**
 * The 422 issues of `error` about one field, found by the path after "body" (`["variants", 1, "traffic"]`),
 * so a form can show each next to its input; `exact` leaves out issues about the field's parts.
 */
export function fieldIssues(error: unknown, path: (string | number)[], exact = true): string[] {
  if (!(error instanceof ApiError)) return [];
  const wanted = ["body", ...path].map(String);
  return error.detail
    .filter((issue) => {
      const at = issue.loc.map(String);
      if (exact ? at.length !== wanted.length : at.length < wanted.length) return false;
      return wanted.every((part, index) => at[index] === part);
    })
    .map((issue) => issue.msg);
}

/** What is wrong with one field, under it; the input names it with aria-describedby and aria-invalid. */
export function FieldError({ id, messages }: { id: string; messages: (string | undefined)[] }) {
  const shown = messages.filter((message): message is string => message !== undefined && message !== "");
  if (shown.length === 0) return null;
  return (
    <span class="field-error" id={id}>
      {shown.join(" ")}
    </span>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Runs an action from a button, remembering whether it is under way and how it failed. */
export function useAction<A extends unknown[], T>(
  action: (...args: A) => Promise<T>,
): { run: (...args: A) => Promise<T | undefined>; busy: boolean; error: unknown; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (...args: A): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action(...args);
    } catch (failure) {
      setError(failure);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

interface ConfirmProps {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** When set, the person must type this text before confirming. */
  typed?: string;
  /** The confirmed action is under way: the confirm button is disabled and says so. */
  busy?: boolean;
  /** Why the confirmed action failed, shown in the dialog where the person is looking. */
  error?: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * A modal confirmation on the native <dialog>: it traps focus and closes on Escape. Focus starts on the text
 * to type, or else on Cancel, so that Enter never confirms a destructive action straight away.
 */
export function Confirm(props: ConfirmProps) {
  const { open, title, children, confirmLabel, typed, busy = false, error, onConfirm, onCancel } = props;
  const ref = useRef<HTMLDialogElement>(null);
  const typedInput = useRef<HTMLInputElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const [text, setText] = useState("");
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      setText("");
      dialog.showModal();
      (typedInput.current ?? cancelButton.current)?.focus();
    } else if (!open && dialog.open) dialog.close();
  }, [open]);
  const ready = typed === undefined || text === typed;
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      aria-busy={busy}
      onCancel={(event) => {
        // Escape while the action runs would hide its outcome.
        if (busy) event.preventDefault();
      }}
      onClose={() => open && onCancel()}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          if (ready && !busy) onConfirm();
        }}
      >
        <h2 id="confirm-title">{title}</h2>
        <div>{children}</div>
        {typed !== undefined && (
          <label>
            Type <code>{typed}</code> to confirm
            <input
              ref={typedInput}
              value={text}
              onInput={(event) => setText(event.currentTarget.value)}
              autoComplete="off"
            />
          </label>
        )}
        <ErrorNote error={error} />
        <p class="row">
          <button type="submit" class="danger" disabled={!ready || busy}>
            {confirmLabel}
            {busy && "…"}
          </button>
          <button type="button" class="secondary" ref={cancelButton} onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        </p>
      </form>
    </dialog>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        await navigator.clipboard.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        );
      }}
    >
      {copied ? "Copied" : label}
      <span class="muted" aria-live="polite" style={{ position: "absolute", left: "-9999px" }}>
        {copied ? "Copied to the clipboard" : ""}
      </span>
    </button>
  );
}

export const formatDate = (iso: string | null | undefined): string =>
  iso === null || iso === undefined ? "—" : new Date(iso).toLocaleString();

export const formatNumber = (value: number | null | undefined, digits = 3): string =>
  value === null || value === undefined
    ? "—"
    : Number.isInteger(value)
      ? value.toLocaleString()
      : value.toFixed(digits);

export interface Series {
  label: string;
  values: (number | null)[];
  /** A CSS custom property holding the colour, e.g. --series-1. */
  color: string;
  dash?: number[];
}

const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000];

/**
 * Tick labels with as many decimals as the step between ticks has. uPlot's own labels stop at three, so
 * close NDCG figures (0.2346, 0.2348) all read "0.235".
 */
const tickLabels = (_chart: uPlot, splits: number[], _axis: number, _space: number, step: number) => {
  const decimals = Math.min(10, (String(step).split(".")[1] ?? "").length);
  return splits.map((value) =>
    value.toLocaleString(undefined, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }),
  );
};

const cssVar = (name: string): string =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * A line chart (uPlot) over `x`, sized to its container. `caption` names the chart for screen readers,
 * which also get the values as a table next to it.
 */
export function LineChart(props: {
  caption: string;
  x: number[];
  xLabel: string;
  series: Series[];
  time?: boolean;
  /** The x values are whole numbers (model versions): no ticks between them. */
  wholeX?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (element === null || props.x.length === 0) return;
    const text = cssVar("--text");
    const grid = cssVar("--border");
    const axis = { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid } };
    const chart = new uPlot(
      {
        width: element.clientWidth || 600,
        height: 240,
        scales: { x: { time: props.time ?? false } },
        // Room for "100,000" on the y axis; the legend names the series (values are in the tables beside).
        axes: [
          props.wholeX
            ? { ...axis, label: props.xLabel, incrs: WHOLE_STEPS, values: tickLabels }
            : { ...axis, label: props.xLabel },
          { ...axis, size: 64, values: tickLabels },
        ],
        legend: { live: false },
        series: [
          { label: props.xLabel },
          ...props.series.map((one) => ({
            label: one.label,
            stroke: cssVar(one.color),
            width: 2,
            ...(one.dash === undefined ? {} : { dash: one.dash }),
            points: { show: true },
          })),
        ],
      },
      [props.x, ...props.series.map((one) => one.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: 240 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [props.x, props.series, props.xLabel, props.time, props.wholeX]);
  return (
    <figure>
      <figcaption>{props.caption}</figcaption>
      <div ref={box} class="chart" role="img" aria-label={props.caption} />
    </figure>
  );
}
