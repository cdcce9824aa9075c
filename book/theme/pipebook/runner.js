// Runs over the runner's WebSocket (/api/run): one socket per run or sweep. Opens it,
// sends the first message, hands the server's messages on as they are (connect) or as
// callbacks (the start* helpers), closes when done. Each kind of job has one start*
// helper here: it names the kind's first message and the message type that ends its
// session; a new kind adds one.
// Messages that belong to a run carry its id (`run`); an `error` without one, once a
// run has started, refuses some other message and does not end the run. A result is
// followed by `saved` (whether the runner's history has it, and why not): a run's
// session calls result(msg) at once and stays open for its `saved {store: "history"}`,
// handed to saved(msg) like a lab record's `saved {store: "labs"}`; a sweep's `done`
// comes after its last `saved`.

import { pageToken, runSocketUrl } from "./api.js";
import { t } from "./i18n.js";

/**
 * Opens a session and hands `onEvent` every message as the server sent it
 * ({type, run?, ...}), plus the few the session itself says: `{type: "connecting"}`,
 * `{type: "notice", message}` (a refusal of another message while the run goes on),
 * `{type: "cancelled"}` when the server did not answer a cancel, and
 * `{type: "error", message}` when the connection failed or closed early. A page's
 * reducer (runlife.js) folds these directly.
 * @param {object} first the message to send when the socket opens
 * @param {string} endsWith the message type that ends the session ("result", "done", "saved", "wakeup", "behaviour" or "pages");
 *   a "result" session ends at its history `saved`, after the result
 * @param {(event: object) => void} onEvent
 * @returns {{cancel(): void}}
 */
export function connect(first, endsWith, onEvent) {
  let finished = false;
  let socket;
  let started = false;
  // A result arrived: what is left is only whether it was saved.
  let resulted = false;

  const close = () => {
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, "done");
  };
  const finish = (event) => {
    if (finished) return;
    finished = true;
    onEvent(event);
    close();
  };
  // The end after a result: nothing more to tell.
  const settle = () => {
    if (finished) return;
    finished = true;
    close();
  };
  const fail = (message) => finish({ type: "error", message });

  const token = pageToken();
  if (!token) {
    queueMicrotask(() => fail(t("This page was not served by the runner, so it cannot run steps.")));
    return { cancel() {} };
  }

  onEvent({ type: "connecting" });
  try {
    socket = new WebSocket(runSocketUrl(token));
  } catch (err) {
    queueMicrotask(() => fail(t("Could not open a connection to the runner: {message}", { message: err.message })));
    return { cancel() {} };
  }

  let opened = false;
  socket.addEventListener("open", () => {
    opened = true;
    socket.send(JSON.stringify(first));
  });

  socket.addEventListener("message", (event) => {
    let msg;
    try {
      msg = JSON.parse(event.data);
    } catch {
      return;
    }
    if (finished || typeof msg?.type !== "string") return;
    switch (msg.type) {
      case "started":
        started = true;
        onEvent(msg);
        break;
      case "result":
        if (endsWith === "result") resulted = true;
        onEvent(msg);
        break;
      case "cancelled":
        finish(msg);
        break;
      case "saved":
        if (msg.run === undefined) {
          finish(msg);
        } else {
          onEvent(msg);
          if (resulted && msg.store === "history") settle();
        }
        break;
      case "error":
        if (started && msg.run === undefined) onEvent({ type: "notice", message: msg.message });
        else fail(msg.message || t("The runner reported an error."));
        break;
      default:
        // The type this session ends with (a sweep's `done`, a comparison's
        // `verdict`, `wakeup`, `pages`) ends it; queued, progress, point, profile
        // and whatever a newer runner adds pass on.
        if (msg.type === endsWith) finish(msg);
        else onEvent(msg);
        break;
    }
  });

  socket.addEventListener("close", (event) => {
    if (finished) return;
    // The run ended; only its `saved` was still to come.
    if (resulted) return settle();
    fail(
      opened
        ? t("The connection to the runner closed before the run finished{reason}.", { reason: event.reason ? ` (${event.reason})` : "" })
        : t("Could not connect to the runner. If it was restarted, reload this page."),
    );
  });

  return {
    cancel() {
      if (finished) return;
      if (resulted) return settle();
      if (socket.readyState === WebSocket.OPEN) {
        socket.send(JSON.stringify({ type: "cancel" }));
        // The server answers `cancelled`; closing the socket also stops the run.
        setTimeout(() => finish({ type: "cancelled" }), 3000);
      } else {
        finish({ type: "cancelled" });
      }
    },
  };
}

/**
 * The same session as callbacks, for cards that want one function per message:
 * connecting, queued(position), started(msg), progress(msg), point(msg), profile(msg),
 * result(msg), done(msg), saved(msg), wakeup(msg), behaviour(msg), pages(msg), cancelled(), error(message),
 * notice(message); a message type in snake_case goes to its camelCase callback
 * (`latency_progress` to latencyProgress(msg)).
 */
function session(first, on, endsWith) {
  return connect(first, endsWith, (msg) => {
    switch (msg.type) {
      case "connecting":
      case "cancelled":
        on[msg.type]?.();
        break;
      case "queued":
        on.queued?.(msg.position);
        break;
      case "error":
      case "notice":
        on[msg.type]?.(msg.message);
        break;
      default:
        on[msg.type.replace(/_([a-z])/g, (_, c) => c.toUpperCase())]?.(msg);
        break;
    }
  });
}

/** The first message of a run of `step` (`lab` {id, task} records it for a lab task). */
function runMessage(step, params, lab) {
  return { type: "run", step, params, ...(lab ? { lab } : {}) };
}

/**
 * One run of `step` with `params` (validated by the server); ends with
 * result/cancelled/error, a result followed by saved(msg). `lab` ({id, task})
 * records the result for a lab task.
 */
export function startRun(step, params, on, lab) {
  return session(runMessage(step, params, lab), on, "result");
}

/** The same run, its messages handed to `onEvent` as they come (see connect). */
export function connectRun(step, params, onEvent, lab) {
  return connect(runMessage(step, params, lab), "result", onEvent);
}

/**
 * A lab message that saves something (`predict`, `reset_lab`): ends with
 * saved(msg) (`ok` false, with `error {kind, message}`, when the disk said no)
 * or error(message) (refused).
 */
export function saveLab(message, on) {
  return session(message, on, "saved");
}

/**
 * A sweep: `step` run at each of `values` of `param`, each value a queued run; the
 * server sends `point {value, result}` per run and `done` at the end.
 */
export function startSweep(step, param, values, repeats, params, on, lab) {
  return session({ type: "sweep", step, param, values, repeats, params, ...(lab ? { lab } : {}) }, on, "done");
}

/** One run of the IPC lab's `mechanism` with `params` ({bytes, chunk}); ends like a run. `lab` ({id, task}) records it for a lab task. */
export function startIpc(mechanism, params, on, lab) {
  return session({ type: "ipc", mechanism, params, ...(lab ? { lab } : {}) }, on, "result");
}

/**
 * One configuration of the latency lab ({mechanism, mode, size, round_trips, cpus?});
 * streams latencyProgress(msg) ({done, of, buckets}) and ends like a run.
 */
export function startLatency(params, on) {
  return session({ type: "latency", ...params }, on, "result");
}

/**
 * A wakeup measurement (queued like a run): ends with `wakeup {wakeup, findings}`,
 * cancelled or error.
 */
export function startWakeup(on) {
  return session({ type: "wakeup" }, on, "wakeup");
}

/**
 * The kernel behaviour probes again (queued like a run): ends with
 * `behaviour {behaviour, probed_at_ms}`, cancelled or error.
 */
export function startProbe(on) {
  return session({ type: "probe" }, on, "behaviour");
}

/**
 * The page inspector on `step`'s writer buffers (`touch` true/false overrides whether they
 * are written first; null leaves it to the step); ends with `pages {step, touch, report}`.
 */
export function startPages(step, touch, on) {
  const message = { type: "pages", step };
  if (touch !== null && touch !== undefined) message.touch = touch;
  return session(message, on, "pages");
}

/**
 * A tuning search of `step` (`budget` seconds of runs): `started {kind: "tune", cells, own, runs}`,
 * then trial(msg) after every run ({index, of, buf_size, pipe_size, own, median, best}), ends like a run.
 */
export function startTune(step, budget, on) {
  return session({ type: "tune", step, budget }, on, "result");
}

/** A program of the runner's tool table (an id, never a command) as one end (`side`), moving `bytes`; ends like a run. */
export function startTool(tool, side, bytes, on) {
  return session({ type: "tool", tool, as: side, bytes }, on, "result");
}

/**
 * Many writers and readers on one pipe ({writers, readers, msg_sizes, bytes}): sharedPoint(msg)
 * after every point, then the result with every point.
 */
export function startSharedPipe(params, on) {
  return session({ type: "shared_pipe", ...params }, on, "result");
}

/**
 * Two steps head to head in quiet interleaved pairs ({a, b, pairs, budget?, params}):
 * leg(msg) per run ({side, index, of, comparison?, result}); ends with
 * verdict(msg) ({a, b, ratio, ci_low, ci_high, pairs, verdict, more_pairs, sentence}).
 */
export function startCompare(request, on) {
  return session({ type: "compare", ...request }, on, "verdict");
}
