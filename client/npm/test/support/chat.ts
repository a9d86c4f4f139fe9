/**
 * The quickstart's tables as the tests see them: the rows of `message` and `user` in the JSON
 * mapping (64-bit integers as numbers, or decimal strings beyond 2^53 - 1), and the table map
 * that types a `Client`, a `Replay` and the hooks.
 */

/** A row of `message`. */
export interface Message {
  id: number | string;
  sender: string;
  sent: number | string;
  text: string;
}

/** A row of `user`. */
export interface User {
  identity: string;
  name: string;
  online: boolean;
}

/** The quickstart's public tables. */
export type Chat = { message: Message; user: User };
