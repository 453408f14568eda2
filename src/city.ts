/**
 * The `City` namespace of the public API: the service tag and its layer in one place, so that
 * `City.City` is the tag and `City.layer(options)` builds it.
 * @since 0.1.0
 */
export { City, type CityScope, type CityShape } from "./services/city/City.ts"
export { type CityLayerOptions, core, layer, make, type StartPlugin } from "./layers/City.ts"
