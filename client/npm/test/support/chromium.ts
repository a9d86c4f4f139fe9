/**
 * Headless Chromium for the bundler tests and the React quickstart's
 * (examples/quickstart/react/test/), driven over WebDriver: Debian's `chromium` and
 * `chromium-driver` (which .ci/run installs, and the Rust browser tests use too), spoken to
 * with `fetch` (the W3C WebDriver protocol is JSON over HTTP, so no client library is needed).
 * Missing, they fail the test, saying what to install.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { freePort } from "./server.js";

const CHROMIUM = "/usr/bin/chromium";
const CHROMEDRIVER = "/usr/bin/chromedriver";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A chromedriver process and one headless Chromium session of it. */
export class Browser {
  private constructor(
    private readonly driver: ChildProcess,
    private readonly base: string,
    private session = "",
  ) {}

  /** Starts chromedriver on a free port, then a headless Chromium with the profile `profile`. */
  static async start(profile: string): Promise<Browser> {
    for (const [path, pkg] of [[CHROMIUM, "chromium"], [CHROMEDRIVER, "chromium-driver"]] as const) {
      if (!existsSync(path)) {
        throw new Error(`${path} is missing: apt-get install ${pkg} (.ci/run installs it)`);
      }
    }
    const port = await freePort();
    const driver = spawn(CHROMEDRIVER, [`--port=${port}`], { stdio: "ignore" });
    // Should the test process end without stopping it, chromedriver (and its Chromium) go too.
    const orphaned = () => driver.kill("SIGKILL");
    process.once("exit", orphaned);
    driver.once("exit", () => process.removeListener("exit", orphaned));
    const browser = new Browser(driver, `http://127.0.0.1:${port}`);
    try {
      const start = Date.now();
      while (!(await fetch(`${browser.base}/status`).then((r) => r.ok, () => false))) {
        if (Date.now() - start > 20_000) throw new Error("chromedriver did not answer within 20 s");
        await sleep(100);
      }
      const created = (await browser.command("POST", "/session", {
        capabilities: {
          alwaysMatch: {
            browserName: "chrome",
            "goog:chromeOptions": {
              binary: CHROMIUM,
              args: [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", `--user-data-dir=${profile}`,
              ],
            },
          },
        },
      })) as { sessionId: string };
      browser.session = created.sessionId;
    } catch (error) {
      driver.kill();
      throw error;
    }
    return browser;
  }

  /** One WebDriver command; its `value`, or an error with the driver's message. */
  private async command(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as { value: unknown };
    if (!response.ok) {
      throw new Error(`WebDriver ${method} ${path}: ${response.status} ${JSON.stringify(answer.value)}`);
    }
    return answer.value;
  }

  /** Opens `url` in the session's window. */
  async goto(url: string): Promise<void> {
    await this.command("POST", `/session/${this.session}/url`, { url });
  }

  /** Runs `script` (a function body) in the page; what it returns. */
  async execute(script: string): Promise<unknown> {
    return this.command("POST", `/session/${this.session}/execute/sync`, { script, args: [] });
  }

  /** Polls `script` until it returns something other than `null`; that value. */
  async waitFor(what: string, script: string, withinMs = 60_000): Promise<unknown> {
    const start = Date.now();
    for (;;) {
      const value = await this.execute(script);
      if (value !== null && value !== undefined) return value;
      if (Date.now() - start > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
      await sleep(100);
    }
  }

  /** Deletes the cookies of the page's host (all its ports': cookies do not tell them apart). */
  async deleteCookies(): Promise<void> {
    await this.command("DELETE", `/session/${this.session}/cookie`);
  }

  /** Reloads the page. */
  async reload(): Promise<void> {
    await this.command("POST", `/session/${this.session}/refresh`, {});
  }

  /** The WebDriver id of the first element `css` selects (an error if none does). */
  private async element(css: string): Promise<string> {
    const found = (await this.command("POST", `/session/${this.session}/element`, {
      using: "css selector",
      value: css,
    })) as Record<string, string>;
    return Object.values(found)[0]!;
  }

  /**
   * Types `text` into the field `css` selects, after clearing it: key events as a user's, so
   * that frameworks listening to input events (React's controlled inputs) see them.
   */
  async type(css: string, text: string): Promise<void> {
    const element = await this.element(css);
    await this.command("POST", `/session/${this.session}/element/${element}/clear`, {});
    await this.command("POST", `/session/${this.session}/element/${element}/value`, { text });
  }

  /** Clicks the element `css` selects. */
  async click(css: string): Promise<void> {
    const element = await this.element(css);
    await this.command("POST", `/session/${this.session}/element/${element}/click`, {});
  }

  /** Ends the session and chromedriver. */
  async stop(): Promise<void> {
    if (this.session !== "") {
      await this.command("DELETE", `/session/${this.session}`).catch(() => undefined);
    }
    this.driver.kill();
  }
}
