/**
 * New builds of a module published under a connected client (`wasmod publish`), against a
 * real `wasmod serve` of the notes module (the builds the Rust tests of publishing use): a
 * query set the server ends at the swap is subscribed again by the client when the new build
 * sends rows it reads as it did (a new visibility filter), stays ended when it cannot (a
 * column added: the description the client connected with no longer matches), and the app
 * hears which (`onNewBuild`); a set whose table did not change carries on without a word.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, type NewBuildEvent } from "../dist/node.js";
import { Server, notesBuilds, tempDir, until } from "./support/server.js";

/** A row of `note`, as builds 1 and `notes_filtered` have it. */
interface Note {
  id: number;
  text: string;
}

/** The notes module's tables. */
type Notes = { note: Note; tag: { name: string } };

describe("a client in Node across new builds of the module", () => {
  const data = tempDir();
  let server: Server;
  let client: Client<Notes> | undefined;
  let builds: Awaited<ReturnType<typeof notesBuilds>>;

  beforeAll(async () => {
    builds = await notesBuilds();
    server = await Server.start({ data: data.path, module: builds.notes });
  });

  afterAll(async () => {
    await client?.disconnect();
    await server?.stop();
    data.remove();
  });

  it("subscribes again to a set a new build ended, and tells the app what became of it", async () => {
    client = await Client.connect<Notes>(server.url);
    const notes = client;
    for (const text of ["one", "hidden"]) await notes.callReducer("add_note", [text]);
    await notes.callReducer("add_tag", ["red"]);
    const inserted: string[] = [];
    const deleted: string[] = [];
    notes.onInsert("note", (row) => inserted.push(row.text));
    notes.onDelete("note", (row) => deleted.push(row.text));
    const noteEvents: NewBuildEvent[] = [];
    const tagEvents: NewBuildEvent[] = [];
    await new Promise<void>((applied) =>
      notes.subscribe(["SELECT * FROM note"], { onApplied: applied, onNewBuild: (event) => noteEvents.push(event) }),
    );
    await new Promise<void>((applied) =>
      notes.subscribe(["SELECT * FROM tag"], { onApplied: applied, onNewBuild: (event) => tagEvents.push(event) }),
    );
    const texts = () => notes.rows("note").map((row) => row.text).sort();
    expect(texts()).toEqual(["hidden", "one"]);

    // The same columns, with a visibility filter that hides "hidden": followed.
    await server.publish(builds.notesFiltered);
    await until("the set over notes back", () => noteEvents.length > 0);
    expect(noteEvents).toHaveLength(1);
    const [resubscribed] = noteEvents;
    expect(resubscribed?.kind).toBe("resubscribed");
    expect(resubscribed?.ended).toContain("visibility filter");
    expect(texts()).toEqual(["one"]);
    expect(deleted).toEqual(["hidden"]);
    expect(inserted).toEqual(["one", "hidden"]); // "one" was not inserted again
    await notes.callReducer("add_note", ["two"]);
    expect(texts()).toEqual(["one", "two"]);

    // Notes gain a column: the client reads rows with the description it connected with, so
    // the set stays ended and its rows leave; the set over tags carries on.
    await server.publish(builds.notesV2);
    await until("the set over notes ended", () => noteEvents.length > 1);
    const ended = noteEvents[1];
    expect(ended?.kind).toBe("ended");
    expect(ended?.ended).toContain("table `note` has other columns");
    expect(ended?.kind === "ended" ? ended.reason : "").toContain("new build's bindings");
    expect(notes.rows("note")).toEqual([]);
    expect(deleted.sort()).toEqual(["hidden", "one", "two"]);
    await notes.callReducer("add_tag", ["blue"]);
    expect(notes.rows("tag").map((tag) => tag.name).sort()).toEqual(["blue", "red"]);
    expect(tagEvents).toEqual([]);
  }, 120_000);
});
