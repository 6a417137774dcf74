# Writes a C++ source holding the SQL migrations, so cronwheel-admin carries its schema and
# needs no files at run time.
#   cmake -DOUTPUT=<file.cpp> -DINPUTS=<a.sql;b.sql> -P embed_migrations.cmake
# Each input is named NNNN_description.sql; NNNN is its version.
set(entries "")
set(previous 0)
foreach(input IN LISTS INPUTS)
  get_filename_component(name "${input}" NAME)
  if(NOT name MATCHES "^([0-9][0-9][0-9][0-9])_[a-z0-9_]+\\.sql$")
    message(FATAL_ERROR "migration ${name}: expected NNNN_description.sql")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  math(EXPR expected "${previous} + 1")
  if(NOT version EQUAL expected)
    message(FATAL_ERROR "migration ${name}: expected version ${expected}")
  endif()
  set(previous ${version})
  file(READ "${input}" sql)
  string(FIND "${sql}" ")cwsql\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "migration ${name} contains the raw-string delimiter )cwsql\"")
  endif()
  string(APPEND entries "    {${version}, \"${name}\", R\"cwsql(${sql})cwsql\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from sql/*.sql by cmake/embed_migrations.cmake. Do not edit.
#include \"admin/pg/migrations.h\"

namespace cronwheel::admin {

const std::vector<Migration>& embedded_migrations() {
  static const std::vector<Migration> migrations = {
${entries}  };
  return migrations;
}

}  // namespace cronwheel::admin
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
