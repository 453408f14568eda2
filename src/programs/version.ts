/**
 * The package's version, for `city --version` and the status page's health part.
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as TextFile from "../services/files/TextFile.ts"

const decodeManifest = Schema.decodeUnknownOption(
  Schema.parseJson(Schema.Struct({ name: Schema.String, version: Schema.String }))
)

/**
 * The version in package.json, found by walking up from this module (the sources, `dist/`, or
 * the bundle `dist/city.cjs` all live below it).
 */
export const version: Effect.Effect<string, never, FileSystem.FileSystem> = Effect.gen(function*() {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let depth = 0; depth < 6; depth++) {
    const text = yield* TextFile.read(join(dir, "package.json"), TextFile.kinds.settings).pipe(
      Effect.orElseSucceed(() => Option.none<string>())
    )
    if (Option.isSome(text)) {
      const manifest = decodeManifest(text.value)
      if (Option.isSome(manifest) && manifest.value.name === "effect-city") return manifest.value.version
    }
    dir = dirname(dir)
  }
  return "unknown"
})

