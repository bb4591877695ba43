import type { Db } from './durable-app';

/** A node of a plan: its type, the table and index it reads, the CTE it is in, and (EXPLAIN ANALYZE) the rows it read. */
export interface PlanNode {
  type: string;
  relation?: string;
  index?: string;
  cte?: string;
  /** Under ANALYZE: the rows the node returned plus those its filters and rechecks dropped. */
  rowsRead?: number;
}

/** The nodes of the plan of `explain`, an EXPLAIN statement with FORMAT JSON, each with the CTE it is in. */
export async function planNodes(db: Db, explain: string): Promise<PlanNode[]> {
  const [row] = await db.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, any> }> }>(explain);
  const nodes: PlanNode[] = [];
  const walk = (node: Record<string, any>, cte?: string) => {
    const within = node['Subplan Name'] ?? cte;
    const read =
      node['Actual Rows'] === undefined
        ? undefined
        : node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
    nodes.push({ type: node['Node Type'], relation: node['Relation Name'], index: node['Index Name'], cte: within, rowsRead: read });
    for (const child of node.Plans ?? []) walk(child, within);
  };
  walk(row['QUERY PLAN'][0].Plan);
  return nodes;
}

/**
 * The plan the session of `db` holds for its prepared statement `name` executed with `args` (under
 * `plan_cache_mode = force_generic_plan`, the one Postgres keeps once it stops making custom ones, as
 * a pooled connection of the library does): its nodes on `relation` (all of them without one), each
 * with the CTE it is in.
 */
export async function plannedOn(db: Db, name: string, args: string, relation?: string): Promise<PlanNode[]> {
  const nodes = await planNodes(db, `EXPLAIN (FORMAT JSON) EXECUTE ${name} ${args}`);
  return relation ? nodes.filter((n) => n.relation === relation) : nodes;
}
