import { useState } from "preact/hooks";
import { ApiError, api } from "../api";
import { useSession } from "../session";
import { Confirm, ErrorNote, FieldError, fieldIssues, useAction } from "../ui";

const MIN_PASSWORD = 8;

/**
 * A new password ends every session of the user, this one included (the service revokes all tokens issued
 * before it), so success leads to the log-in page rather than to a page whose next request would be refused.
 */
export function PasswordForm() {
  const { endSession } = useSession();
  const [currentPassword, setCurrentPassword] = useState("");
  const [password, setPassword] = useState("");
  const [repeated, setRepeated] = useState("");
  const [checked, setChecked] = useState(false);
  const tooShort = password.length < MIN_PASSWORD ? `At least ${MIN_PASSWORD} characters.` : undefined;
  const mismatch = repeated !== password ? "The two new passwords differ." : undefined;
  const change = useAction(async () => {
    await api.updateMe({ currentPassword, password });
    endSession(
      "Your password was changed, and every session of your user has ended, this one too. Log in with the " +
        "new password.",
    );
  });
  const wrongPassword = change.error instanceof ApiError && change.error.errorCode === "INVALID_CREDENTIALS";
  const newIssues = fieldIssues(change.error, ["password"]);
  return (
    <form
      class="card"
      aria-labelledby="password-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setChecked(true);
        if (currentPassword === "" || tooShort !== undefined || mismatch !== undefined) return;
        void change.run();
      }}
    >
      <h2 id="password-title">Password</h2>
      <div class="row">
        <div class="field">
          <label>
            Current password
            <input
              type="password"
              autoComplete="current-password"
              value={currentPassword}
              aria-invalid={wrongPassword || (checked && currentPassword === "")}
              aria-describedby="current-password-error"
              onInput={(e) => setCurrentPassword(e.currentTarget.value)}
            />
          </label>
          <FieldError
            id="current-password-error"
            messages={[
              checked && currentPassword === "" ? "Enter your current password." : undefined,
              ...fieldIssues(change.error, ["currentPassword"]),
            ]}
          />
        </div>
        <div class="field">
          <label>
            New password
            <input
              type="password"
              autoComplete="new-password"
              value={password}
              aria-invalid={(checked && tooShort !== undefined) || newIssues.length > 0}
              aria-describedby="new-password-error"
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <FieldError id="new-password-error" messages={[checked ? tooShort : undefined, ...newIssues]} />
        </div>
        <div class="field">
          <label>
            New password again
            <input
              type="password"
              autoComplete="new-password"
              value={repeated}
              aria-invalid={checked && mismatch !== undefined}
              aria-describedby="repeat-password-error"
              onInput={(e) => setRepeated(e.currentTarget.value)}
            />
          </label>
          <FieldError id="repeat-password-error" messages={[checked ? mismatch : undefined]} />
        </div>
      </div>
      <p class="muted">
        Changing the password signs your user out everywhere, this browser included: you log in again with the
        new one. Wrong current passwords count like failed log-ins, and after a few the service asks you to
        wait.
      </p>
      <ErrorNote
        error={change.error}
        omit={(loc) => ["body.password", "body.currentPassword"].includes(loc.join("."))}
      />
      <p>
        <button type="submit" disabled={change.busy}>
          Change the password
        </button>
      </p>
    </form>
  );
}

/**
 * Deleting the signed-in user. The service also deactivates the account when no other user is left (its
 * API keys are revoked, its data kept); sign-up makes one user per account, so that is the usual case.
 */
export function DeleteUser() {
  const { user, account, endSession } = useSession();
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await api.deleteMe();
    setConfirming(false);
    endSession(
      `Your user ${user.email} was deleted. If it was the last user of "${account.name}", that account is ` +
        "deactivated and its API keys no longer work; its data is kept.",
    );
  });
  return (
    <section class="card" aria-labelledby="delete-user-title">
      <h2 id="delete-user-title">Delete your user</h2>
      <p>
        Deleting it signs you out, and nobody can log in as {user.email} any more. If you are the last user of
        "{account.name}", the account is deactivated too: all its API keys stop working at once, so your
        shop's recommendations stop. Its data (products, end users, interactions, models) is kept.
      </p>
      <p>
        <button
          type="button"
          class="danger"
          onClick={() => {
            remove.clear();
            setConfirming(true);
          }}
        >
          Delete my user
        </button>
      </p>
      <Confirm
        open={confirming}
        title="Delete your user?"
        confirmLabel="Delete my user"
        typed={user.email}
        busy={remove.busy}
        error={remove.error}
        onConfirm={() => void remove.run()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          This cannot be undone. If nobody else uses "{account.name}", its API keys are revoked and the
          account is deactivated.
        </p>
      </Confirm>
    </section>
  );
}
