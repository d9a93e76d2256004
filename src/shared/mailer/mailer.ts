/** The mailer interface and sender address, apart from `index.ts` so both implementations can import them. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The action link inside the message; only the outbox mailer logs it, so a local user can follow it. */
  actionLink?: string;
}

export interface Mailer {
  readonly kind: "smtp" | "outbox";
  send(message: MailMessage): Promise<void>;
}

export const MAIL_FROM = "Recommendation Service <no-reply@localhost>";
