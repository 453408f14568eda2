#!/usr/bin/env node
// The `city` binary: registers the TypeScript loader, then runs the CLI program.
import { register } from "tsx/esm/api"

register()
await import("../src/programs/city.ts")
