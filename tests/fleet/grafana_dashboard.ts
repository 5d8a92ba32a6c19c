/*
 * The type a provisioned adaptmon dashboard must satisfy, built from Grafana's
 * own generated types (@grafana/schema, pinned in tests/fleet/package.json):
 * the dashboard model of schemaVersion 39+ (raw/dashboard), narrowed per
 * panel plugin so that a panel's `options` and `fieldConfig.defaults.custom`
 * are checked against that plugin's own Options / FieldConfig types instead
 * of the dashboard model's Record<string, unknown>.
 *
 * test_grafana_schema.py writes the dashboard JSON as an object literal
 * followed by `satisfies AdaptmonDashboard` and compiles it with tsc --strict.
 * `satisfies` on a literal is what makes the check bite: TypeScript reports
 * excess (misspelled) properties only on fresh object literals, never when an
 * imported JSON module is assigned to a type.
 */
import type * as raw from "@grafana/schema/dist/esm/raw/dashboard/x/Dashboard_types.gen";
import type * as stat from "@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen";
import type * as ts from "@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen";
import type { DataQuery } from "@grafana/schema";
import type * as prometheus from "@grafana/grafana-foundation-sdk/prometheus";

/*
 * Grafana's generated types use string enums (LegendDisplayMode.List, ...);
 * JSON can only hold their values ("list"), which TypeScript does not accept
 * where the enum is expected. Unenum rewrites every string enum into the
 * union of its values and leaves everything else as it is, recursively
 * (homomorphic, so optional properties and arrays keep their shape).
 */
export type Unenum<T> = T extends string
  ? `${T}`
  : T extends readonly (infer E)[]
    ? Unenum<E>[]
    : T extends object
      ? { [K in keyof T]: Unenum<T[K]> }
      : T;

/*
 * Grafana merges a panel's saved `options` and `fieldConfig.defaults.custom`
 * over the panel plugin's defaults when it loads a dashboard, so a saved
 * dashboard lists only what differs from them: every key is optional, at
 * every depth, but a key that is present must exist and hold the right type.
 */
export type Saved<T> = T extends string
  ? `${T}`
  : T extends readonly (infer E)[]
    ? Saved<E>[]
    : T extends object
      ? { [K in keyof T]?: Saved<T[K]> }
      : T;

/*
 * A Prometheus query: the Prometheus data source's own query type as Grafana
 * generates it from the same CUE (@grafana/grafana-foundation-sdk; the
 * Prometheus plugin's package, @grafana/prometheus, needs React, monaco-editor
 * and @grafana/data), with refId required as the DataQuery every data source
 * shares has it. The SDK's marker method is no JSON field.
 */
export type PromTarget = Unenum<
  Omit<prometheus.Dataquery, "_implementsDataqueryVariant" | "refId"> &
    Pick<DataQuery, "refId">
>;

type FieldConfigSource<Custom> = Omit<raw.FieldConfigSource, "defaults"> & {
  defaults: Omit<raw.FieldConfig, "custom"> & { custom?: Custom };
};

type PanelOf<Type extends string, Options, Custom> = Omit<
  raw.Panel,
  "type" | "options" | "fieldConfig" | "targets"
> & {
  type: Type;
  options?: Saved<Options>;
  fieldConfig?: Unenum<FieldConfigSource<Saved<Custom>>>;
  targets?: PromTarget[];
};

/* The panel plugins the dashboard uses; another type is a compile error. */
export type AdaptmonPanel =
  | PanelOf<"stat", stat.Options, Record<string, never>>
  | PanelOf<"timeseries", ts.Options, ts.FieldConfig>;

export type AdaptmonVariable = Unenum<raw.VariableModel>;

export type AdaptmonDashboard = Unenum<
  Omit<raw.Dashboard, "panels" | "templating" | "annotations">
> & {
  annotations?: Unenum<raw.AnnotationContainer>;
  templating?: { list?: AdaptmonVariable[] };
  panels?: AdaptmonPanel[];
};
