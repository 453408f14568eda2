/**
 * What the CommandRunner and EndpointCalls tests share: an executable `sh` script in a folder, and a
 * run request with the usual defaults.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { join } from "node:path"
import type * as CommandRunner from "../../../src/services/capabilities/CommandRunner.ts"

export const script = (dir: string, name: string, body: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = join(dir, name)
    yield* fs.writeFileString(file, `#!/bin/sh\n${body}\n`)
    yield* fs.chmod(file, 0o755)
    return file
  })

export const request = (command: string, overrides: Partial<CommandRunner.RunRequest> = {}): CommandRunner.RunRequest => ({
  command,
  args: [],
  cwd: "/",
  privateDir: Option.none(),
  timeout: "20 seconds",
  ...overrides
})
