// What a running IPC run has done so far, from its `progress` messages: the
// text of the card's status line and how full its bar is. Pure, so node tests it.

import * as fmt from "../format.js";
import { t } from "../i18n.js";

const MIB = 1 << 20;

/**
 * `msg` is `progress {bytes, elapsed_ms, gib_per_s}`; `total` the bytes the
 * `started` message said will move (null when unknown). Before the first byte
 * arrives the runner is still creating files and starting the two ends.
 * Returns {fraction (0..1, or null without a total), text}.
 */
export function ipcProgress(msg, total) {
  const bytes = fmt.isNumber(msg?.bytes) ? msg.bytes : 0;
  const known = fmt.isNumber(total) && total > 0;
  const fraction = known ? Math.min(1, bytes / total) : null;
  const time = fmt.isNumber(msg?.elapsed_ms) ? ` (${fmt.ms(msg.elapsed_ms)})` : "";
  if (bytes === 0) {
    return { fraction: known ? 0 : null, text: t("Setting up: files, then the two ends{time}…", { time }) };
  }
  const share = known ? t(" of {total} ({percent}%)", { total: fmt.bytes(total), percent: Math.floor(fraction * 100) }) : "";
  const rate = fmt.isNumber(msg.gib_per_s) && msg.gib_per_s > 0
    ? t(", lately {rate} {u_mibs}", { u_mibs: "MiB/s", rate: fmt.figure((msg.gib_per_s * (1 << 30)) / MIB) })
    : "";
  return { fraction, text: t("Received {bytes}{share}{rate}{time}…", { bytes: fmt.bytes(bytes), share, rate, time }) };
}
