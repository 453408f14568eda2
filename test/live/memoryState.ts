/**
 * An in-memory StateRoot for unit and property tests of the stores built on it: the same
 * interface, a Map for the files, a no-op lock (one process), and `crash()` semantics for free
 * (whatever is in the Map was "written"; whatever a test kept in local variables is lost).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { StateRoot } from "../../src/services/capabilities/StateRoot.ts"

export const memoryStateRoot = (root = "/memory") => {
  const files = new Map<string, string>()
  const service = StateRoot.of({
    root,
    resolve: (relative) => `${root}/${relative}`,
    ensure: Effect.void,
    require: Effect.void,
    readText: (relative) => Effect.sync(() => Option.fromNullable(files.get(relative))),
    writeText: (relative, text) => Effect.sync(() => void files.set(relative, text)),
    writeJson: (relative, value) => Effect.sync(() => void files.set(relative, `${JSON.stringify(value, null, 2)}\n`)),
    makeDirectory: () => Effect.void,
    remove: (relative) =>
      Effect.sync(() => {
        for (const key of [...files.keys()]) if (key === relative || key.startsWith(`${relative}/`)) files.delete(key)
      }),
    list: (relative) =>
      Effect.sync(() =>
        [...files.keys()]
          .filter((k) => k.startsWith(`${relative}/`) && !k.slice(relative.length + 1).includes("/"))
          .map((k) => k.slice(relative.length + 1))
          .sort()
      ),
    lock: Effect.void
  })
  return { files, service }
}
