#include "admin/pg/pg_overview_store.h"

#include <stdexcept>
#include <string>

#include "admin/pg/pg_registry_store.h"
#include "admin/pg/pg_store_support.h"

namespace cronwheel::admin {

using namespace pg;

namespace {

// "<column> updated within the last <param> milliseconds", by the database's clock.
std::string alive(const std::string& column, const std::string& param) {
  return column + " > now() - " + param + "::bigint * interval '1 millisecond'";
}

// Registers `name` (all groups) with sql(false) and `name_scoped` (the groups of a scope, its
// last parameter) with sql(true).
template <class Sql>
void prepare_both(pqxx::connection& c, const std::string& name, Sql sql) {
  c.prepare(name, sql(false));
  c.prepare(name + "_scoped", sql(true));
}

// A quarter hour's column of job_run_report: q.n = 0..3 picks <prefix>_00 .. <prefix>_45.
std::string quarter(const std::string& prefix) {
  return "CASE q.n WHEN 0 THEN r." + prefix + "_00 WHEN 1 THEN r." + prefix + "_15 WHEN 2 THEN r." + prefix +
         "_30 ELSE r." + prefix + "_45 END";
}

}  // namespace

void PgOverviewStore::prepare(pqxx::connection& c) {
  c.prepare("overview_nodes", "SELECT node_id, address, version, " + ms("started_at", "started_at") + ", " +
                                  ms("heartbeat_at", "heartbeat_at") + ", " + ms("lease_until", "lease_until") +
                                  ", lease_until > now() AS alive FROM admin_node ORDER BY node_id COLLATE \"C\"");
  c.prepare("overview_last_scan", "SELECT last_scan_node, " + ms("last_scan_at", "last_scan_at") +
                                      " FROM job_lock WHERE lock_name = 'schedule_lock' AND last_scan_node IS NOT NULL");
  c.prepare("overview_registrations",
            "SELECT id, registry_group, registry_key, registry_value, " + ms("updated_at", "updated_at") +
                ", clock_offset_ms, clock_delay_ms, lead_dispatch, count(*) OVER () AS total FROM job_registry WHERE registry_group = 'EXECUTOR' AND registry_key = $1"
                " AND " + alive("updated_at", "$2") + " ORDER BY registry_value COLLATE \"C\" LIMIT $3 OFFSET $4");
  // At most 512 executors of 256 names each: a small set, made distinct in the database.
  c.prepare("overview_handlers",
            "SELECT DISTINCT h COLLATE \"C\" AS h FROM job_registry, unnest(handlers) AS h WHERE "
            "registry_group = 'EXECUTOR' AND registry_key = $1 AND " + alive("updated_at", "$2") + " ORDER BY 1");
  c.prepare("overview_registrations_count",
            "SELECT count(*) FROM job_registry WHERE registry_group = 'EXECUTOR' AND registry_key = $1 AND " +
                alive("updated_at", "$2"));

  // $1 today's end, $2 the executors' dead timeout, [$3 the scope]. Each count reads a small
  // set: job_count (the jobs, per group), the runs in flight (job_log_active, read once for both
  // counts: no index holds a state alone, sql/0030_active_runs_hot.sql), job_registry and
  // admin_node.
  prepare_both(c, "overview_figures", [](bool scoped) {
    const std::string in_scope = scoped ? " AND job_group = ANY ($3::bigint[])" : "";
    return "SELECT (SELECT coalesce(sum(enabled), 0)::bigint FROM job_count WHERE true" + in_scope + ") AS jobs_enabled,"
           " (SELECT coalesce(sum(total), 0)::bigint FROM job_count WHERE true" + in_scope + ") AS jobs_total,"
           " flight.running, flight.pending,"
           " (SELECT count(DISTINCT registry_value) FROM job_registry WHERE registry_group = 'EXECUTOR' AND " +
           alive("updated_at", "$2") +
           (scoped ? " AND registry_key IN (SELECT app_name FROM job_group WHERE id = ANY ($3::bigint[]))" : "") +
           ") AS executors_online,"
           " (SELECT count(*) FROM admin_node WHERE lease_until > now()) AS nodes_alive"
           " FROM (SELECT count(*) FILTER (WHERE state IN ('sending', 'triggered')) AS running,"
           " count(*) FILTER (WHERE state = 'pending' AND scheduled_time < $1) AS pending"
           " FROM job_log_active WHERE true" + in_scope + ") AS flight";
  });
  // $1 the day bounds (n + 1 ascending epoch ms), $2 the first, $3 the last, [$4 the scope].
  // Each quarter hour of each report row goes to the day its start falls in (width_bucket:
  // 1..n inside the bounds, 0 and n + 1 outside).
  prepare_both(c, "overview_days", [](bool scoped) {
    return "SELECT width_bucket(extract(epoch FROM r.hour)::bigint * 1000 + q.n * 900000, $1::bigint[]) AS day,"
           " sum(" + quarter("succeeded") + ") AS succeeded, sum(" + quarter("failed") + ") AS failed"
           " FROM job_run_report r CROSS JOIN (VALUES (0), (1), (2), (3)) AS q(n)"
           " WHERE r.hour > " + ts("$2") + " - interval '1 hour' AND r.hour < " + ts("$3") +
           (scoped ? " AND r.job_group = ANY ($4::bigint[])" : "") + " GROUP BY 1";
  });
  // The newest failures of each group (job_log_failed), then the newest of those. $1 how
  // many, [$2 the scope].
  prepare_both(c, "overview_failures", [](bool scoped) {
    return "SELECT l.*, j.job_desc FROM (SELECT id FROM job_group" +
           std::string(scoped ? " WHERE id = ANY ($2::bigint[])" : "") +
           ") g CROSS JOIN LATERAL (SELECT " + kLogColumns +
           " FROM job_log_finished WHERE job_group = g.id AND state IN ('failed', 'lost')"
           " ORDER BY scheduled_time DESC, id DESC LIMIT $1) l"
           " JOIN job_info j ON j.id = l.job_id ORDER BY l.scheduled_time DESC, l.id DESC LIMIT $1";
  });
}

NodesOverview PgOverviewStore::nodes() {
  return db_.read([&](pqxx::read_transaction& tx) {
    NodesOverview out;
    for (const auto& r : tx.exec_prepared("overview_nodes")) {
      NodeStatus s;
      s.node.node_id = r["node_id"].as<std::string>();
      s.node.address = r["address"].as<std::string>();
      s.node.version = r["version"].as<std::string>();
      s.node.started_at = r["started_at"].as<std::int64_t>();
      s.node.heartbeat_at = r["heartbeat_at"].as<std::int64_t>();
      s.node.lease_until = r["lease_until"].as<std::int64_t>();
      s.alive = r["alive"].as<bool>();
      out.nodes.push_back(std::move(s));
    }
    auto scan = tx.exec_prepared("overview_last_scan");
    if (!scan.empty()) out.last_scan = ScanMark{scan[0][0].as<std::string>(), scan[0][1].as<std::int64_t>()};
    return out;
  });
}

Page<RegistryEntry> PgOverviewStore::registrations(std::string_view app_name, std::int64_t dead_after_ms,
                                                   const PageRequest& page) {
  const std::string app(app_name);
  return db_.read([&](pqxx::read_transaction& tx) {
    auto rows = tx.exec_prepared("overview_registrations", app, dead_after_ms, page.limit, page.offset);
    Page<RegistryEntry> out;
    for (const auto& r : rows) {
      RegistryEntry e;
      e.id = r["id"].as<std::int64_t>();
      e.registry_group = r["registry_group"].as<std::string>();
      e.registry_key = r["registry_key"].as<std::string>();
      e.registry_value = r["registry_value"].as<std::string>();
      e.updated_at = r["updated_at"].as<std::int64_t>();
      e.clock = registry_clock_from(r);
      out.items.push_back(std::move(e));
    }
    out.total = page_total(rows, [&] {
      return tx.exec_prepared1("overview_registrations_count", app, dead_after_ms)[0].as<std::int64_t>();
    });
    return out;
  });
}

std::vector<std::string> PgOverviewStore::handlers(std::string_view app_name, std::int64_t dead_after_ms) {
  const std::string app(app_name);
  return db_.read([&](pqxx::read_transaction& tx) {
    return all_of<std::string>(tx.exec_prepared("overview_handlers", app, dead_after_ms),
                               [](const pqxx::row& r) { return r[0].as<std::string>(); });
  });
}

Dashboard PgOverviewStore::dashboard(const DashboardQuery& q) {
  if (q.day_starts.empty()) throw std::invalid_argument("dashboard: day_starts needs at least one instant");
  const auto scope = scope_param(q.scope);
  return db_.read([&](pqxx::read_transaction& tx) {
    Dashboard d;
    const auto figures = q.scope ? tx.exec_prepared1("overview_figures_scoped", q.today_end, q.executor_dead_after_ms, scope)
                                 : tx.exec_prepared1("overview_figures", q.today_end, q.executor_dead_after_ms);
    d.jobs_enabled = figures["jobs_enabled"].as<std::int64_t>();
    d.jobs_total = figures["jobs_total"].as<std::int64_t>();
    d.running = figures["running"].as<std::int64_t>();
    d.pending = figures["pending"].as<std::int64_t>();
    d.executors_online = figures["executors_online"].as<std::int64_t>();
    d.nodes_alive = figures["nodes_alive"].as<std::int64_t>();

    // Counts per day between `bounds` (n + 1 instants), n entries.
    auto days = [&](const std::vector<std::int64_t>& bounds) {
      std::vector<RunCounts> out(bounds.size() - 1);
      if (out.empty()) return out;
      const auto array = bigint_array(bounds);
      auto rows = q.scope ? tx.exec_prepared("overview_days_scoped", array, bounds.front(), bounds.back(), scope)
                          : tx.exec_prepared("overview_days", array, bounds.front(), bounds.back());
      for (const auto& r : rows) {
        const auto day = r["day"].as<std::int64_t>();
        if (day < 1 || day > static_cast<std::int64_t>(out.size())) continue;
        out[day - 1] = {r["succeeded"].as<std::int64_t>(), r["failed"].as<std::int64_t>()};
      }
      return out;
    };
    d.days = days(q.day_starts);
    d.today = days({q.today_start, q.today_end}).front();

    auto failures = q.scope ? tx.exec_prepared("overview_failures_scoped", q.failures, scope)
                            : tx.exec_prepared("overview_failures", q.failures);
    for (const auto& r : failures) d.latest_failures.push_back({log_from(r), r["job_desc"].as<std::string>()});
    return d;
  });
}

}  // namespace cronwheel::admin
