/** The signed-in user and their account, shared by every page. */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Account, CurrentUser } from "./api";

export interface SessionState {
  user: CurrentUser;
  account: Account;
  /** Reads the user and account again (after a change elsewhere, such as a plan change). */
  refresh: () => void;
  /** Takes the account as a write answered it, saving the two reads of `refresh`. */
  setAccount: (account: Account) => void;
  /** Forgets the session in this browser and opens the log-in page, saying why there (`notice`). */
  endSession: (notice: string) => void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (state === null) throw new Error("useSession outside a signed-in page");
  return state;
}
