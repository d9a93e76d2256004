import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Link, Redirect, Route, Router, Switch, useLocation } from "wouter-preact";
import { type Account, ApiError, api, onSignedOut, session } from "./api";
import { AccountPage } from "./pages/account";
import { LogInPage, SignUpPage } from "./pages/auth";
import { DataPage } from "./pages/data";
import { HomePage } from "./pages/home";
import { KeysPage } from "./pages/keys";
import { PlaygroundPage } from "./pages/playground";
import { ResultsPage } from "./pages/results";
import { TrainingPage } from "./pages/training";
import { UsagePage } from "./pages/usage";
import { BASE, currentAppPath, logInPath, returnPath } from "./paths";
import { SessionContext } from "./session";
import { CopyButton, ErrorNote, Loading, useAction, useAsync } from "./ui";

const PAGES = [
  { path: "/", label: "Home" },
  { path: "/keys", label: "API keys" },
  { path: "/data", label: "Data" },
  { path: "/training", label: "Training" },
  { path: "/playground", label: "Playground" },
  { path: "/results", label: "Online results" },
  { path: "/usage", label: "Usage and plan" },
  { path: "/account", label: "Account" },
] as const;

export function App() {
  const [signedIn, setSignedIn] = useState(session.token() !== null);
  // The secret key sign-up answers with is shown once, on the first page, and kept nowhere.
  const [firstKey, setFirstKey] = useState<string | null>(null);
  // Why the session ended, when the dashboard ended it (a new password, a deleted user): said on the log-in page.
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => onSignedOut(() => setSignedIn(false)), []);
  return (
    <Router base={BASE}>
      {signedIn ? (
        <SignedIn
          firstKey={firstKey}
          onFirstKeySeen={() => setFirstKey(null)}
          onSignOut={(why) => {
            setNotice(why ?? null);
            setSignedIn(false);
          }}
        />
      ) : (
        <Switch>
          <Route path="/signup">
            <SignUpPage
              onSignedIn={(key) => {
                setFirstKey(key);
                setSignedIn(true);
              }}
            />
          </Route>
          <Route path="/login">
            <LogInPage
              notice={notice}
              onSignedIn={() => {
                setNotice(null);
                setSignedIn(true);
              }}
            />
          </Route>
          <Route>
            {/* The page asked for is opened once the person has logged in. */}
            <Redirect to={logInPath(currentAppPath())} replace />
          </Route>
        </Switch>
      )}
    </Router>
  );
}

function SignedIn(props: {
  firstKey: string | null;
  onFirstKeySeen: () => void;
  onSignOut: (notice?: string) => void;
}) {
  const state = useAsync(async () => {
    const [user, account] = await Promise.all([api.me(), api.account()]);
    return { user, account };
  }, []);
  const [latestAccount, setAccount] = useState<Account | null>(null);
  const [location, navigate] = useLocation();
  // Moving to another page puts focus on its heading, as a screen reader user expects after a link; a link
  // followed while the account was still loading moves it once the page is drawn.
  // The first page keeps focus where the browser puts it (the skip link comes first).
  const drawn = state.data !== undefined;
  const firstLocation = useRef(location);
  const followed = useRef(false);
  useEffect(() => {
    if (location !== firstLocation.current) followed.current = true;
    if (followed.current) document.querySelector<HTMLElement>("main h1")?.focus();
  }, [location, drawn]);
  if (location === "/login" || location === "/signup") return <Redirect to={returnPath()} replace />;
  if (state.data === undefined) {
    // Without the user and account no page can be drawn, but the way out (Log out) stays.
    return (
      <Frame who={null} onSignOut={props.onSignOut}>
        {state.error === undefined ? (
          <Loading what="your account" />
        ) : (
          <>
            <h1 tabIndex={-1}>Your account could not be loaded</h1>
            <ErrorNote error={state.error} />
            <p>
              <button type="button" class="secondary" onClick={state.reload} disabled={state.loading}>
                Try again
              </button>
            </p>
          </>
        )}
      </Frame>
    );
  }
  const { user } = state.data;
  const account = latestAccount ?? state.data.account;
  const refresh = () => {
    setAccount(null);
    state.reload();
  };
  const endSession = (notice: string) => {
    session.clear();
    props.onSignOut(notice);
    navigate("/login");
  };
  return (
    <SessionContext.Provider value={{ user, account, refresh, setAccount, endSession }}>
      <Frame
        who={`${user.email} · ${account.plan}`}
        onSignOut={props.onSignOut}
        banner={!user.emailVerified && <VerifyBanner daysLeft={user.gracePeriodDaysLeft} />}
      >
        {props.firstKey !== null && <FirstKey apiKey={props.firstKey} onSeen={props.onFirstKeySeen} />}
        <Pages />
      </Frame>
    </SessionContext.Provider>
  );
}

/** The header (navigation, who is signed in, Log out) around the page's content. */
function Frame(props: {
  who: string | null;
  onSignOut: () => void;
  banner?: ComponentChildren;
  children: ComponentChildren;
}) {
  const [location, navigate] = useLocation();
  const leave = () => {
    session.clear();
    props.onSignOut();
    navigate("/login");
  };
  const logOut = useAction(async () => {
    try {
      await api.logOut();
    } catch (error) {
      // A token the service no longer accepts is signed out already; any other refusal leaves the session
      // valid on the server, which the person must know rather than believe they have logged out.
      if (!(error instanceof ApiError && error.status === 401)) throw error;
    }
    leave();
  });
  const current = (path: string) =>
    (path === "/" ? location === "/" : location.startsWith(path)) ? ("page" as const) : undefined;
  return (
    <>
      <a class="skip-link" href="#content">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Recommendation Service</span>
        <nav class="main" aria-label="Dashboard">
          <ul>
            {PAGES.map((page) => (
              <li key={page.path}>
                <Link href={page.path} aria-current={current(page.path)}>
                  {page.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        {props.who !== null && <span class="muted who">{props.who}</span>}
        <button type="button" class="secondary" onClick={() => logOut.run()} disabled={logOut.busy}>
          Log out
        </button>
      </header>
      {props.banner}
      <main id="content">
        {logOut.error !== undefined && (
          <div class="card" data-testid="logout-refused">
            <p>
              <strong>You are still signed in:</strong> the service did not end your session, so it stays
              usable until it expires.
            </p>
            <ErrorNote error={logOut.error} />
            <p class="row">
              <button type="button" class="secondary" onClick={() => logOut.run()} disabled={logOut.busy}>
                Try logging out again
              </button>
              <button type="button" class="secondary" onClick={leave}>
                Forget the session in this browser only
              </button>
            </p>
          </div>
        )}
        {props.children}
      </main>
    </>
  );
}

function Pages() {
  return (
    <Switch>
      <Route path="/">
        <HomePage />
      </Route>
      <Route path="/keys">
        <KeysPage />
      </Route>
      <Route path="/data">
        <DataPage view="products" />
      </Route>
      <Route path="/data/products/:id">
        <DataPage view="product" />
      </Route>
      <Route path="/data/end-users">
        <DataPage view="end-users" />
      </Route>
      <Route path="/data/end-users/:id">
        <DataPage view="end-user" />
      </Route>
      <Route path="/data/upload">
        <DataPage view="upload" />
      </Route>
      <Route path="/training">
        <TrainingPage />
      </Route>
      <Route path="/playground">
        <PlaygroundPage />
      </Route>
      <Route path="/results">
        <ResultsPage />
      </Route>
      <Route path="/usage">
        <UsagePage />
      </Route>
      <Route path="/account">
        <AccountPage />
      </Route>
      <Route>
        <h1 tabIndex={-1}>Page not found</h1>
        <p>
          <Link href="/">Back to the home page</Link>
        </p>
      </Route>
    </Switch>
  );
}

function FirstKey({ apiKey, onSeen }: { apiKey: string; onSeen: () => void }) {
  return (
    <section class="card" aria-labelledby="first-key-title">
      <h2 id="first-key-title">Your first secret key</h2>
      <p>For your servers. Copy it now: it is shown this once and cannot be recovered.</p>
      <p class="secret" data-testid="first-key">
        {apiKey}
      </p>
      <p class="row">
        <CopyButton text={apiKey} label="Copy the key" />
        <button type="button" class="secondary" onClick={onSeen}>
          I have saved it
        </button>
      </p>
    </section>
  );
}

function VerifyBanner({ daysLeft }: { daysLeft: number | null }) {
  const send = useAction(() => api.sendVerification());
  const [sent, setSent] = useState(false);
  return (
    <div class="banner" role="status">
      <span>
        Please verify your e-mail address.{" "}
        {daysLeft === null
          ? ""
          : daysLeft > 0
            ? `${daysLeft} ${daysLeft === 1 ? "day" : "days"} left before API keys stop working until you do.`
            : "The grace period is over: API keys answer 403 until you verify."}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={send.busy}
        onClick={async () => {
          if ((await send.run()) !== undefined) setSent(true);
        }}
      >
        Send the link again
      </button>
      {sent && <span>Sent: check your inbox.</span>}
      <ErrorNote error={send.error} />
    </div>
  );
}
