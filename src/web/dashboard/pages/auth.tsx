import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, session } from "../api";
import { ErrorNote, useAction } from "../ui";

export function SignUpPage({ onSignedIn }: { onSignedIn: (firstKey: string) => void }) {
  const [accountName, setAccountName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const register = useAction(async () => {
    const answer = await api.register({ accountName, email, password });
    session.set(answer.accessToken);
    onSignedIn(answer.apiKey);
  });
  return (
    <main class="auth">
      <h1>Create your account</h1>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void register.run();
        }}
      >
        <label>
          Shop or company name
          <input value={accountName} onInput={(e) => setAccountName(e.currentTarget.value)} required />
        </label>
        <label>
          E-mail
          <input
            type="email"
            autoComplete="email"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            required
          />
        </label>
        <label>
          Password (at least 8 characters)
          <input
            type="password"
            autoComplete="new-password"
            minLength={8}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </label>
        <ErrorNote error={register.error} />
        <button type="submit" disabled={register.busy}>
          Sign up
        </button>
        <p>
          Already have an account? <Link href="/login">Log in</Link>
        </p>
      </form>
    </main>
  );
}

export function LogInPage({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const logIn = useAction(async () => {
    const answer = await api.logIn(email, password);
    session.set(answer.accessToken);
    onSignedIn();
  });
  return (
    <main class="auth">
      <h1>Log in</h1>
      {notice !== null && (
        <p class="notice" role="status" data-testid="login-notice">
          {notice}
        </p>
      )}
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void logIn.run();
        }}
      >
        <label>
          E-mail
          <input
            type="email"
            autoComplete="email"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            required
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </label>
        <ErrorNote error={logIn.error} />
        <button type="submit" disabled={logIn.busy}>
          Log in
        </button>
        <p>
          New here? <Link href="/signup">Create an account</Link>
        </p>
      </form>
    </main>
  );
}
