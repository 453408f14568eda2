/**
 * The `City` namespace of the public API: the service tag, its layers and its types in one place,
 * so that `City.City` is the tag and `City.layer(options)` builds it.
 * @since 0.1.0
 */
export { City, type CityCalls, type CityShape } from "./services/city/CityService.ts"
export type { CityOptions } from "./services/city/CityConfig.ts"
export type { ClosedPlugin, CloseReport } from "./schema/Errors.ts"
export {
  type CityBuildError,
  type CityLayerOptions,
  type CityLayerOptionsFor,
  layer,
  layerConfig,
  make,
  type CheckedStartPlugins,
  type NoStartPluginProvides,
  type RequiredStartFailure,
  type StartPlugin,
  type StartRequirements
} from "./services/city/internal/city.ts"
export type { AddOptions } from "./services/city/PluginAdd.ts"
export type { Removal } from "./services/city/LeasedDisposal.ts"
export type { SystemBlock, Calls, Invoke } from "./services/city/Calls.ts"
export type { Agent, AgentsShape } from "./services/city/Sessions.ts"
export type { Session, SessionStatus, StepView, Turn, TurnSkills } from "./services/city/Session.ts"
export type { Workspace, WorkspacesShape } from "./services/city/Workspaces.ts"
export type { ExecutionView, PluginView } from "./services/city/ExecutionView.ts"
