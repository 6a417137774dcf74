#include "cli/xxl_job/xxl_job_import.h"

#include "common/cron/cron_expression.h"

namespace cronwheel::cli::xxl_job {

ImportResult import_xxl_job(const ImportOptions& options) {
  MysqlUrl url;
  try {
    url = parse_mysql_url(options.mysql_url);
  } catch (const MysqlUrlError& error) {
    throw XxlJobImportError(error.what());
  }
  // Checked before connecting: a wrong zone should not cost a read of the whole database.
  if (options.zone.size() > 64 || !common::is_valid_time_zone(options.zone)) {
    throw XxlJobImportError("--zone: unknown time zone '" + options.zone.substr(0, 64) +
                            "' (the XXL-JOB admin's, an IANA name such as Asia/Shanghai)");
  }
  XxlJobTables tables;
  try {
    tables = read_xxl_job_tables(url, options.read);
  } catch (const XxlJobReadError& error) {
    throw XxlJobImportError(error.what());
  }
  MappingResult mapped = map_xxl_job(tables, MappingOptions{options.zone, options.keep_running});
  return ImportResult{std::move(mapped.document), std::move(mapped.findings)};
}

}  // namespace cronwheel::cli::xxl_job
