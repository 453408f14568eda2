/**
 * Before any test: the `city` bundle (`dist/city.cjs`) is built if it is missing or older than
 * the sources, so the real-process tests run the code under test, on a clean clone too.
 */
import { ensureBundle } from "../scripts/bundle.mjs"

export default async function setup(): Promise<void> {
  await ensureBundle()
}
