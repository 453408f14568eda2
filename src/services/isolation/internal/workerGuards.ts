/**
 * What a plugin in a worker thread cannot do to its host (docs/plugin-loader.md, "Containment"):
 * in a worker thread, `process.kill` and `process.abort` act on the whole process, the host's
 * included, so before the plugin's entry is imported they are replaced in the thread:
 * - `process.abort()` ends this thread only, with exit code 134 (the host says `it called
 *   process.abort()`);
 * - `process.kill` of this process, or of a process group (`pid <= 0`), throws: a plugin that must
 *   be able to do that runs with `"isolation": "process"`, where it signals its own process.
 * In a child process (isolation `"process"`) nothing is replaced: both act on the plugin's own
 * process.
 * @since 0.1.0
 */
import { isMainThread } from "node:worker_threads"
import { abortExitCode } from "../../../schema/Isolation.ts"

/**
 * Installs the guards once, in a worker thread; in a process's main thread it does nothing.
 * @since 0.1.0
 * @category internals
 */
export const guardHostProcess = (): void => {
  if (isMainThread) return
  const kill = process.kill.bind(process)
  process.kill = (pid: number, signal?: string | number): true => {
    if (pid === process.pid || pid <= 0) {
      throw new Error(
        `a plugin in a worker thread may not signal its host's process (process.kill(${pid})): run it with "isolation": "process"`
      )
    }
    return kill(pid, signal)
  }
  process.abort = (): never => process.exit(abortExitCode)
}
