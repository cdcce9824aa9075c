// Runs over the runner's WebSocket (/api/run): one socket per job. `start(message,
// onEvent)` is the one way to start a job: `message` is the job's first message as
// docs/protocol.md writes it (`{type: "run", step, params}`, `{type: "sweep", ...}`,
// ...), and LAST_MESSAGE names the message type that closes each kind's session; a
// new kind whose session closes with its `result` needs nothing here, any other adds
// a row. Cards reach it through cardlife.js, which owns a card's session, its busy
// state and its words.
// Messages that belong to a run carry its id (`run`); an `error` without one, once a
// run has started, refuses some other message and does not end the run. A result is
// followed by `saved` (whether the runner's history has it, and why not): a run's
// session hands on the result at once and stays open for its `saved {store:
// "history"}`, like a lab record's `saved {store: "labs"}`; a sweep's `done` comes
// after its last `saved`.

import { pageToken, runSocketUrl } from "./api.js";
import { t } from "./i18n.js";

/**
 * The message type that closes a kind's session, by the type of its first
 * message; a kind not listed closes with its `result` (then its history `saved`).
 * ("End" is kept for a run's two processes.)
 */
export const LAST_MESSAGE = {
  sweep: "done",
  compare: "verdict",
  wakeup: "wakeup",
  probe: "behaviour",
  pages: "pages",
  predict: "saved",
  reset_lab: "saved",
};

/** The message type that closes the session a first `message` opens. */
export function lastMessageOf(message) {
  return LAST_MESSAGE[message.type] ?? "result";
}

/**
 * Opens a job's session and hands `onEvent` every message as the server sent it
 * ({type, run?, ...}), plus the few the session itself says: `{type: "connecting"}`,
 * `{type: "notice", message}` (a refusal of another message while the run goes on),
 * `{type: "cancelled"}` when the server did not answer a cancel, and
 * `{type: "error", message}` when the connection failed or closed early.
 * @param {object} message the job's first message, sent when the socket opens
 * @param {(event: object) => void} onEvent
 * @returns {{cancel(): void}}
 */
export function start(message, onEvent) {
  const session = new Session(message, onEvent);
  session.open();
  return { cancel: () => session.cancel() };
}

/** One socket's session: what has arrived so far, and whether it is over. */
class Session {
  constructor(first, onEvent) {
    this.first = first;
    this.lastType = lastMessageOf(first);
    this.onEvent = onEvent;
    this.socket = null;
    this.opened = false;
    this.started = false;
    this.finished = false;
    // A result arrived: what is left is only whether it was saved.
    this.resulted = false;
  }

  open() {
    const token = pageToken();
    if (!token) {
      queueMicrotask(() => this.fail(t("This page was not served by the runner, so it cannot run steps.")));
      return;
    }
    this.onEvent({ type: "connecting" });
    try {
      this.socket = new WebSocket(runSocketUrl(token));
    } catch (err) {
      queueMicrotask(() => this.fail(t("Could not open a connection to the runner: {message}", { message: err.message })));
      return;
    }
    this.socket.addEventListener("open", () => {
      this.opened = true;
      this.socket.send(JSON.stringify(this.first));
    });
    this.socket.addEventListener("message", (event) => this.receive(event.data));
    this.socket.addEventListener("close", (event) => this.closed(event));
  }

  receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (this.finished || typeof msg?.type !== "string") return;
    switch (msg.type) {
      case "started":
        this.started = true;
        this.onEvent(msg);
        break;
      case "result":
        if (this.lastType === "result") this.resulted = true;
        this.onEvent(msg);
        break;
      case "cancelled":
        this.finish(msg);
        break;
      case "saved":
        this.saved(msg);
        break;
      case "error":
        if (this.started && msg.run === undefined) this.onEvent({ type: "notice", message: msg.message });
        else this.fail(msg.message || t("The runner reported an error."));
        break;
      default:
        // The type this session ends with (a sweep's `done`, a comparison's
        // `verdict`, `wakeup`, `pages`) ends it; queued, progress, point, profile
        // and whatever a newer runner adds pass on.
        if (msg.type === this.lastType) this.finish(msg);
        else this.onEvent(msg);
        break;
    }
  }

  saved(msg) {
    // A save of no run (a prediction, a fresh start) is the answer itself.
    if (msg.run === undefined) return this.finish(msg);
    this.onEvent(msg);
    if (this.resulted && msg.store === "history") this.settle();
  }

  closed(event) {
    if (this.finished) return;
    // The run ended; only its `saved` was still to come.
    if (this.resulted) return this.settle();
    this.fail(
      this.opened
        ? t("The connection to the runner closed before the run finished{reason}.", { reason: event.reason ? ` (${event.reason})` : "" })
        : t("Could not connect to the runner. If it was restarted, reload this page."),
    );
  }

  cancel() {
    // Without a socket the session is already failing: its error says why.
    if (this.finished || !this.socket) return;
    if (this.resulted) return this.settle();
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: "cancel" }));
      // The server answers `cancelled`; closing the socket also stops the run.
      setTimeout(() => this.finish({ type: "cancelled" }), 3000);
    } else {
      this.finish({ type: "cancelled" });
    }
  }

  close() {
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000, "done");
  }

  finish(event) {
    if (this.finished) return;
    this.finished = true;
    this.onEvent(event);
    this.close();
  }

  // The end after a result: nothing more to tell.
  settle() {
    if (this.finished) return;
    this.finished = true;
    this.close();
  }

  fail(message) {
    this.finish({ type: "error", message });
  }
}

/**
 * A card's handlers as one `onEvent`: connecting(), queued(position), cancelled(),
 * error(message), notice(message), and every other message type to its camelCase
 * handler with the message (`latency_progress` to latencyProgress(msg)).
 */
export function byName(on) {
  return (msg) => {
    switch (msg.type) {
      case "connecting":
      case "cancelled":
        return on[msg.type]?.();
      case "queued":
        return on.queued?.(msg.position);
      case "error":
      case "notice":
        return on[msg.type]?.(msg.message);
      default:
        return on[handlerName(msg.type)]?.(msg);
    }
  };
}

/** A message type's handler name: `latency_progress` -> `latencyProgress`. */
export function handlerName(type) {
  return type.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}
