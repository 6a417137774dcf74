#include "cli/xxl_job/xxl_job_reader.h"

#include <charconv>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#include "common/util/utf8.h"

namespace cronwheel::cli::xxl_job {

namespace {

constexpr std::size_t kMaxSourceBytes = 16 * 1024 * 1024;  // MEDIUMTEXT's limit
constexpr std::size_t kMaxFieldBytes = 64 * 1024;          // TEXT's limit; every other column is shorter
constexpr unsigned long kMaxPacketBytes = 64UL * 1024 * 1024;

// The server's message on one line.
std::string one_line(const char* text) {
  std::string out = text != nullptr ? text : "";
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

struct MysqlCloser {
  void operator()(MYSQL* mysql) const noexcept { mysql_close(mysql); }
};
struct ResultFreer {
  void operator()(MYSQL_RES* result) const noexcept { mysql_free_result(result); }
};
using Connection = std::unique_ptr<MYSQL, MysqlCloser>;
using Result = std::unique_ptr<MYSQL_RES, ResultFreer>;

class Reader {
 public:
  Reader(const MysqlUrl& url, const ReadOptions& options) : url_(url), options_(options) {}

  XxlJobTables read() {
    connect();
    execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "");
    execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", "");
    XxlJobTables tables;
    read_table("xxl_job_group", "SELECT id, app_name, title, address_type, address_list FROM xxl_job_group",
               options_.max_groups, [&](const Row& row) {
                 GroupRow group;
                 group.id = row.integer(0);
                 group.app_name = row.text(1);
                 group.title = row.text(2);
                 group.address_type = row.integer(3);
                 group.address_list = row.text(4);
                 tables.groups.push_back(std::move(group));
               });
    read_table("xxl_job_info",
               "SELECT id, job_group, job_desc, author, alarm_email, schedule_type, schedule_conf, "
               "misfire_strategy, executor_route_strategy, executor_handler, executor_param, "
               "executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, "
               "glue_remark, glue_updatetime, child_jobid, trigger_status FROM xxl_job_info",
               options_.max_jobs, [&](const Row& row) {
                 JobRow job;
                 job.id = row.integer(0);
                 job.job_group = row.integer(1);
                 job.job_desc = row.text(2);
                 job.author = row.text(3);
                 job.alarm_email = row.text(4);
                 job.schedule_type = row.text(5);
                 job.schedule_conf = row.text(6);
                 job.misfire_strategy = row.text(7);
                 job.executor_route_strategy = row.text(8);
                 job.executor_handler = row.text(9);
                 job.executor_param = row.text(10);
                 job.executor_block_strategy = row.text(11);
                 job.executor_timeout = row.integer(12);
                 job.executor_fail_retry_count = row.integer(13);
                 job.glue_type = row.text(14);
                 job.glue_source = row.text(15, kMaxSourceBytes);
                 job.glue_remark = row.text(16);
                 job.glue_updatetime = row.text(17);
                 job.child_jobid = row.text(18);
                 job.trigger_status = row.integer(19);
                 tables.jobs.push_back(std::move(job));
               });
    read_table("xxl_job_logglue", "SELECT id, job_id, glue_type, glue_source, glue_remark, add_time FROM xxl_job_logglue",
               options_.max_glue_versions, [&](const Row& row) {
                 GlueVersionRow version;
                 version.id = row.integer(0);
                 version.job_id = row.integer(1);
                 version.glue_type = row.text(2);
                 version.glue_source = row.text(3, kMaxSourceBytes);
                 version.glue_remark = row.text(4);
                 version.add_time = row.text(5);
                 tables.glue_versions.push_back(std::move(version));
               });
    read_table("xxl_job_user", "SELECT id, username, role, permission FROM xxl_job_user", options_.max_users,
               [&](const Row& row) {
                 UserRow user;
                 user.id = row.integer(0);
                 user.username = row.text(1);
                 user.role = row.integer(2);
                 user.permission = row.text(3);
                 tables.users.push_back(std::move(user));
               });
    execute("ROLLBACK", "");
    return tables;
  }

 private:
  // One fetched row of `table`, its values checked as they are taken.
  class Row {
   public:
    Row(Reader& reader, const char* table, MYSQL_ROW values, unsigned long* lengths, unsigned count)
        : reader_(reader), table_(table), values_(values), lengths_(lengths), count_(count) {}

    std::string text(unsigned i, std::size_t max_bytes = kMaxFieldBytes) const {
      if (i >= count_ || values_[i] == nullptr) return {};
      const std::string_view value(values_[i], lengths_[i]);
      if (value.size() > max_bytes) {
        fail("is " + std::to_string(value.size()) + " bytes, more than " + std::to_string(max_bytes), i);
      }
      if (!common::utf8::is_valid(value)) fail("is not UTF-8", i);
      reader_.count_bytes(value.size());
      return std::string(value);
    }

    std::int64_t integer(unsigned i) const {
      if (i >= count_ || values_[i] == nullptr) return 0;
      const std::string_view value(values_[i], lengths_[i]);
      std::int64_t number = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size()) fail("is not an integer", i);
      return number;
    }

   private:
    [[noreturn]] void fail(const std::string& what, unsigned i) const {
      const std::string id = values_[0] != nullptr ? std::string(values_[0], std::min<unsigned long>(lengths_[0], 20)) : "?";
      const MYSQL_FIELD* field = mysql_fetch_field_direct(reader_.result_, i);
      throw XxlJobReadError(std::string(table_) + " row " + id + ": column " + (field != nullptr ? field->name : "?") +
                            " " + what);
    }

    Reader& reader_;
    const char* table_;
    MYSQL_ROW values_;
    unsigned long* lengths_;
    unsigned count_;
  };

  void connect() {
    mysql_ = Connection(mysql_init(nullptr));
    if (!mysql_) throw XxlJobReadError("cannot start the MySQL client library (out of memory)");
    MYSQL* m = mysql_.get();
    const unsigned protocol = MYSQL_PROTOCOL_TCP;
    const unsigned connect_timeout = options_.connect_timeout_seconds;
    const unsigned read_timeout = options_.read_timeout_seconds;
    const my_bool no = 0;
    const unsigned long max_packet = kMaxPacketBytes;
    mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &protocol);
    mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
    mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
    mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &read_timeout);
    mysql_optionsv(m, MYSQL_OPT_LOCAL_INFILE, &no);
    mysql_optionsv(m, MYSQL_OPT_MAX_ALLOWED_PACKET, &max_packet);
    mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (mysql_real_connect(m, url_.host.c_str(), url_.user.c_str(), url_.password.c_str(), url_.database.c_str(),
                           static_cast<unsigned>(url_.port), nullptr, 0) == nullptr) {
      const unsigned code = mysql_errno(m);
      const std::string server = url_.redacted();
      const std::string detail = one_line(mysql_error(m));
      if (code == ER_ACCESS_DENIED_ERROR) {
        throw XxlJobReadError("access denied at " + server + " (wrong user or password): " + detail);
      }
      if (code == ER_DBACCESS_DENIED_ERROR) {
        throw XxlJobReadError("user '" + url_.user + "' may not use database '" + url_.database + "' at " + server +
                              ": " + detail);
      }
      if (code == ER_BAD_DB_ERROR) throw XxlJobReadError("no database '" + url_.database + "' at " + server);
      throw XxlJobReadError("cannot connect to " + server + ": " + detail);
    }
  }

  void execute(const std::string& sql, const char* table) {
    if (mysql_real_query(mysql_.get(), sql.data(), sql.size()) != 0) fail_query(table);
  }

  [[noreturn]] void fail_query(const char* table) {
    MYSQL* m = mysql_.get();
    const unsigned code = mysql_errno(m);
    const std::string detail = one_line(mysql_error(m));
    const std::string name = table;
    if (code == ER_NO_SUCH_TABLE) throw XxlJobReadError("not an XXL-JOB 2.4 database: table " + name + " missing");
    if (code == ER_BAD_FIELD_ERROR) {
      throw XxlJobReadError("not an XXL-JOB 2.4 database: " + name + " lacks a column (" + detail + ")");
    }
    if (code == ER_TABLEACCESS_DENIED_ERROR || code == ER_COLUMNACCESS_DENIED_ERROR) {
      throw XxlJobReadError("user '" + url_.user + "' may not read " + name + ": " + detail);
    }
    if (code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR) {
      throw XxlJobReadError("lost the connection to " + url_.redacted() + (name.empty() ? "" : " reading " + name) +
                            " (timed out after " + std::to_string(options_.read_timeout_seconds) + " s?): " + detail);
    }
    throw XxlJobReadError((name.empty() ? "at " + url_.redacted() : "reading " + name) + ": " + detail);
  }

  template <class OnRow>
  void read_table(const char* table, const std::string& select, std::size_t max_rows, OnRow on_row) {
    // One row more than allowed tells "too many" from "just enough".
    execute(select + " ORDER BY id LIMIT " + std::to_string(max_rows + 1), table);
    Result result(mysql_use_result(mysql_.get()));
    if (!result) fail_query(table);
    result_ = result.get();
    const unsigned count = mysql_num_fields(result_);
    std::size_t rows = 0;
    while (MYSQL_ROW values = mysql_fetch_row(result_)) {
      if (++rows > max_rows) {
        throw XxlJobReadError(std::string(table) + " has more than " + std::to_string(max_rows) +
                              " rows, more than one import takes");
      }
      on_row(Row(*this, table, values, mysql_fetch_lengths(result_), count));
    }
    if (mysql_errno(mysql_.get()) != 0) fail_query(table);
    result_ = nullptr;
  }

  void count_bytes(std::size_t bytes) {
    total_bytes_ += bytes;
    if (total_bytes_ > options_.max_total_bytes) {
      throw XxlJobReadError("the database holds more than " + std::to_string(options_.max_total_bytes) +
                            " bytes of groups, jobs, scripts and users, more than one import takes");
    }
  }

  const MysqlUrl& url_;
  const ReadOptions& options_;
  Connection mysql_;
  MYSQL_RES* result_ = nullptr;
  std::size_t total_bytes_ = 0;
};

}  // namespace

XxlJobTables read_xxl_job_tables(const MysqlUrl& url, const ReadOptions& options) {
  return Reader(url, options).read();
}

}  // namespace cronwheel::cli::xxl_job
