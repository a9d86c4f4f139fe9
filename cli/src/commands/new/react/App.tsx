/**
 * The caller's tasks: a live query of the rows of `task` the caller owns fills the client
 * cache, `useTable` re-renders when they change (whoever changed them), and the module's
 * reducers are called through the generated bindings, their errors shown.
 */

import { useMemo, useState, type FormEvent } from "react";
import { bindHooks, useCall, useSubscription } from "@wasmod/client/react";
import type { SignIn } from "./auth.ts";
import { DbConnection, type Tables, type Task } from "./module_bindings.ts";

/** The hooks, typed by the module's tables: `useTable("task")` is a `Task[]`. */
const { useConnection, useTable } = bindHooks<Tables>();

/**
 * The caller's tasks, and their user row if they signed in (`:sender` is the subscriber's
 * identity).
 */
const QUERIES = ["SELECT * FROM task WHERE owner = :sender", "SELECT * FROM user WHERE identity = :sender"];

/**
 * The app: `signIn` when sign-in is configured (`src/auth.ts`), `signedIn` whether the user
 * signed in.
 */
export function App({ signIn, signedIn }: { signIn?: SignIn; signedIn: boolean }) {
  const { client, status, error } = useConnection();
  const { applied, error: refused } = useSubscription(QUERIES);
  const db = useMemo(() => (client === undefined ? undefined : new DbConnection(client)), [client]);
  const tasks = useTable("task");
  const sorted = useMemo(() => [...tasks].sort((a, b) => Number(a.id) - Number(b.id)), [tasks]);
  const [add, adding] = useCall((title: string) => db!.reducers.add({ title }));
  const [complete, completing] = useCall((id: Task["id"]) => db!.reducers.complete({ id }));
  const failure = error?.message ?? refused ?? adding.error?.message ?? completing.error?.message;

  return (
    <main>
      <h1>Tasks</h1>
      {signIn && <Account signIn={signIn} signedIn={signedIn} />}
      <p id="status">{applied ? status : status === "connected" ? "subscribing" : status}</p>
      <AddTask disabled={!applied} add={add} />
      <ul id="tasks">
        {sorted.map((task) => (
          <li key={String(task.id)} className={task.done ? "done" : undefined}>
            <span>{task.title}</span>
            {!task.done && <button onClick={() => void complete(task.id)}>done</button>}
          </li>
        ))}
      </ul>
      <p id="error" role="alert">
        {failure ?? ""}
      </p>
    </main>
  );
}

/**
 * Who is signed in, by the name the module keeps from their token's claims, with the button
 * to sign out; or the button to sign in.
 */
function Account({ signIn, signedIn }: { signIn: SignIn; signedIn: boolean }) {
  const [me] = useTable("user");
  if (!signedIn) {
    return (
      <p id="account">
        <button id="sign-in" onClick={() => void signIn.signIn()}>
          Sign in
        </button>{" "}
        {signIn.failure}
      </p>
    );
  }
  return (
    <p id="account">
      Signed in as <span id="name">{me?.name ?? ""}</span>{" "}
      <button id="sign-out" onClick={() => void signIn.signOut()}>
        Sign out
      </button>
    </p>
  );
}

/** The box to write a task down: cleared once the server has it. */
function AddTask({ disabled, add }: { disabled: boolean; add: (title: string) => Promise<number | undefined> }) {
  const [title, setTitle] = useState("");
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if ((await add(title)) !== undefined) setTitle("");
  };
  return (
    <form onSubmit={submit}>
      <input id="title" value={title} onChange={(event) => setTitle(event.target.value)} placeholder="Something to do" />
      <button type="submit" disabled={disabled}>
        Add
      </button>
    </form>
  );
}
