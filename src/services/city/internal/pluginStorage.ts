/**
 * A plugin's storage folder, `ctx.storage.path` (docs/city-plugin-lifecycle.md, "Two lifecycle
 * checkpoints": `await this.provider.open(storage.path)`): `<root>/data/<name>`, made the first
 * time the plugin reads the path.
 *
 * Decisions:
 * - **Made when first read, not when the context is built.** Most plugins never read it; making it
 *   for every plugin would create `<root>/data/<name>` folders (under `~/.city` for a City without
 *   a root, which otherwise makes nothing there) and put a file system call on every `add`, whose
 *   synchronous path (an initialize that needs no I/O) would then wait for the disk.
 * - **Node's `fs`, not the platform `FileSystem`.** The path is read synchronously (a getter of
 *   `PluginLifecycleContext`, read by a plugin after `yield* PluginLifecycleContext` without any
 *   Effect of ours in between), and the platform's `makeDirectory` on Node is asynchronous: it
 *   cannot run there. The folder must be on the disk anyway, whatever `FileSystem` the
 *   application provides (`MemoryFileSystem` included): plugin code hands the path to any file API.
 * - **Private, as everything under the root** (docs/cli.md, "Files and permissions"): the folder
 *   and the `data` folder made on the way are 0700, whatever the umask.
 * - **An isolated plugin's folder is made in its worker or process**, when its code reads the path
 *   there: the host passes the folder, not the path read (which would make it for every plugin).
 * @since 0.1.0
 */
import { mkdirSync } from "node:fs"
import { folderMode } from "../../root/FileModes.ts"

/**
 * The storage of one plugin instance: `path` makes the folder (with its parents) once.
 * @since 0.1.0
 * @category models
 */
export class PluginStorage {
  #made = false
  constructor(
    /** The folder, `<root>/data/<name>`. */
    readonly folder: string
  ) {}
  /** The folder, made the first time it is read. */
  get path(): string {
    if (!this.#made) {
      mkdirSync(this.folder, { recursive: true, mode: folderMode })
      this.#made = true
    }
    return this.folder
  }
}
