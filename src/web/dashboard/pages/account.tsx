import { useState } from "preact/hooks";
import { ApiError, api } from "../api";
import { useSession } from "../session";
import { ErrorNote, FieldError, fieldIssues, useAction } from "../ui";
import { DeleteUser, PasswordForm } from "./account-security";

/** The signed-in user's name, e-mail and password, the account's name, and deleting the user. */
export function AccountPage() {
  return (
    <>
      <h1 tabIndex={-1}>Account</h1>
      <Profile />
      <PasswordForm />
      <AccountName />
      <DeleteUser />
    </>
  );
}

function Profile() {
  const { user, refresh } = useSession();
  const [fullName, setFullName] = useState(user.fullName ?? "");
  const [email, setEmail] = useState(user.email);
  const [currentPassword, setCurrentPassword] = useState("");
  const [saved, setSaved] = useState<string | null>(null);
  // The service stores addresses in lower case; a change of case alone is no new address.
  const emailChanges = email.trim().toLowerCase() !== user.email.toLowerCase();
  const save = useAction(async () => {
    setSaved(null);
    const answer = await api.updateMe({
      fullName: fullName.trim() === "" ? null : fullName.trim(),
      ...(emailChanges ? { email: email.trim(), currentPassword } : {}),
    });
    setCurrentPassword("");
    if (!emailChanges) {
      setSaved("Your name is saved.");
    } else {
      // The service mails the new address a verification link as it saves it.
      setSaved(
        `Your e-mail address is now ${answer.email}. It needs verifying: a link was sent there, follow it to ` +
          'confirm the address (or use "Send the link again" at the top of the page). Links sent to the old ' +
          "address no longer work.",
      );
    }
    refresh();
  });
  const passwordIssues = fieldIssues(save.error, ["currentPassword"]);
  const wrongPassword = save.error instanceof ApiError && save.error.errorCode === "INVALID_CREDENTIALS";
  return (
    <form
      class="card"
      aria-labelledby="profile-title"
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h2 id="profile-title">You</h2>
      <div class="row">
        <label>
          Name
          <input
            autoComplete="name"
            maxLength={200}
            value={fullName}
            onInput={(e) => setFullName(e.currentTarget.value)}
          />
        </label>
        <label>
          E-mail
          <input
            type="email"
            autoComplete="email"
            size={36}
            required
            maxLength={254}
            value={email}
            aria-describedby="email-hint"
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        {emailChanges && (
          <div class="field">
            <label>
              Current password
              <input
                type="password"
                autoComplete="current-password"
                required
                value={currentPassword}
                aria-invalid={wrongPassword || passwordIssues.length > 0}
                aria-describedby="profile-password-error"
                onInput={(e) => setCurrentPassword(e.currentTarget.value)}
              />
            </label>
            <FieldError id="profile-password-error" messages={passwordIssues} />
          </div>
        )}
      </div>
      <p class="muted" id="email-hint">
        Changing the e-mail address asks for your current password. The new address must be verified: a link
        is sent to it, and until it is followed the dashboard asks you to verify.
      </p>
      <ErrorNote error={save.error} omit={(loc) => loc.join(".") === "body.currentPassword"} />
      {saved !== null && (
        <p class="notice" role="status" data-testid="profile-saved">
          {saved}
        </p>
      )}
      <p>
        <button type="submit" disabled={save.busy}>
          Save
        </button>
      </p>
    </form>
  );
}

/** Renaming an account is for platform administrators (ADMIN_EMAILS); everyone else sees the name only. */
function AccountName() {
  const { user, account, setAccount } = useSession();
  const [name, setName] = useState(account.name);
  const [saved, setSaved] = useState(false);
  const rename = useAction(async () => {
    setSaved(false);
    setAccount(await api.renameAccount(name.trim()));
    setSaved(true);
  });
  const nameIssues = fieldIssues(rename.error, ["name"]);
  if (!user.isAdmin) {
    return (
      <section class="card" aria-labelledby="account-name-title">
        <h2 id="account-name-title">Account name</h2>
        <p data-testid="account-name">{account.name}</p>
        <p class="muted" data-testid="account-name-reason">
          Only platform administrators (the e-mail addresses in the service's <code>ADMIN_EMAILS</code>{" "}
          setting) may rename an account. Ask the people who run this service if it needs a new name.
        </p>
      </section>
    );
  }
  return (
    <form
      class="card"
      aria-labelledby="account-name-title"
      onSubmit={(event) => {
        event.preventDefault();
        void rename.run();
      }}
    >
      <h2 id="account-name-title">Account name</h2>
      <div class="field">
        <label>
          Account name
          <input
            required
            maxLength={200}
            value={name}
            aria-invalid={nameIssues.length > 0}
            aria-describedby="account-name-error"
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <FieldError id="account-name-error" messages={nameIssues} />
      </div>
      <p class="muted">
        You may change it as a platform administrator; the account's users see the new name.
      </p>
      <ErrorNote error={rename.error} omit={(loc) => loc.join(".") === "body.name"} />
      {saved && (
        <p class="notice" role="status" data-testid="account-name-saved">
          The account is now called {account.name}.
        </p>
      )}
      <p>
        <button type="submit" disabled={rename.busy || name.trim() === ""}>
          Rename the account
        </button>
      </p>
    </form>
  );
}
