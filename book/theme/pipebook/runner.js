// One run of one step over the runner's WebSocket (see DESIGN.md, "Server").
// Opens a socket, sends `run`, turns server messages into callbacks, closes when done.

import { pageToken, runSocketUrl } from "./api.js";

/**
 * @param {string} step catalog id
 * @param {object} params validated by the server: seconds, buf_size, bytes, ...
 * @param {object} on callbacks: connecting, queued(position), started(msg), progress(msg),
 *   result(msg), cancelled(), error(message); exactly one of result/cancelled/error ends a run.
 * @returns {{cancel(): void}}
 */
export function startRun(step, params, on) {
  let finished = false;
  let socket;

  const finish = (kind, arg) => {
    if (finished) return;
    finished = true;
    on[kind]?.(arg);
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, "done");
  };

  const token = pageToken();
  if (!token) {
    queueMicrotask(() => finish("error", "This page was not served by the runner, so it cannot run steps."));
    return { cancel() {} };
  }

  on.connecting?.();
  try {
    socket = new WebSocket(runSocketUrl(token));
  } catch (err) {
    queueMicrotask(() => finish("error", `Could not open a connection to the runner: ${err.message}`));
    return { cancel() {} };
  }

  let opened = false;
  socket.addEventListener("open", () => {
    opened = true;
    socket.send(JSON.stringify({ type: "run", step, params }));
  });

  socket.addEventListener("message", (event) => {
    let msg;
    try {
      msg = JSON.parse(event.data);
    } catch {
      return;
    }
    switch (msg.type) {
      case "queued":
        on.queued?.(msg.position);
        break;
      case "started":
        on.started?.(msg);
        break;
      case "progress":
        on.progress?.(msg);
        break;
      case "result":
        finish("result", msg);
        break;
      case "cancelled":
        finish("cancelled");
        break;
      case "error":
        finish("error", msg.message || "The runner reported an error.");
        break;
      default:
        break;
    }
  });

  socket.addEventListener("close", (event) => {
    if (finished) return;
    finish(
      "error",
      opened
        ? `The connection to the runner closed before the run finished${event.reason ? ` (${event.reason})` : ""}.`
        : "Could not connect to the runner. If it was restarted, reload this page.",
    );
  });

  return {
    cancel() {
      if (finished) return;
      if (socket.readyState === WebSocket.OPEN) {
        socket.send(JSON.stringify({ type: "cancel" }));
        // The server answers `cancelled`; closing the socket also stops the run.
        setTimeout(() => finish("cancelled"), 3000);
      } else {
        finish("cancelled");
      }
    },
  };
}
