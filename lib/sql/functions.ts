/**
 * Functions a query may call in the dialects node-sql-parser reads: the engines' built-in
 * functions that only compute a value, by name (lower case). Anything not listed is refused:
 * stored or user-defined functions can write, and so can a few built-ins (MySQL's GET_LOCK,
 * SLEEP, BENCHMARK, LOAD_FILE, MASTER_POS_WAIT, LAST_INSERT_ID(expr); SQLite's load_extension).
 * PostgreSQL's list comes from its own catalog instead (postgres-functions.json).
 */

const words = (s: string) => s.trim().split(/\s+/);

const MYSQL_STRING = words(`ascii bin bit_length char char_length character_length concat concat_ws elt export_set field
  find_in_set format from_base64 hex insert instr lcase left length locate lower lpad ltrim make_set mid oct octet_length
  ord position quote regexp_instr regexp_like regexp_replace regexp_substr repeat replace reverse right rpad rtrim soundex
  space strcmp substr substring substring_index to_base64 trim ucase unhex upper weight_string`);
const MYSQL_NUMERIC = words(`abs acos asin atan atan2 ceil ceiling conv cos cot crc32 degrees exp floor ln log log10 log2 mod
  pi pow power radians rand round sign sin sqrt tan truncate`);
const MYSQL_DATE = words(`adddate addtime convert_tz curdate current_date current_time current_timestamp curtime date date_add
  date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear extract from_days from_unixtime get_format hour
  last_day localtime localtimestamp makedate maketime microsecond minute month monthname now period_add period_diff quarter
  sec_to_time second str_to_date subdate subtime sysdate time time_format time_to_sec timediff timestamp timestampadd
  timestampdiff to_days to_seconds unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year yearweek`);
const MYSQL_OTHER = words(`if ifnull nullif coalesce greatest least isnull interval cast convert binary
  avg bit_and bit_or bit_xor count group_concat json_arrayagg json_objectagg max min std stddev stddev_pop stddev_samp sum
  var_pop var_samp variance any_value grouping
  cume_dist dense_rank first_value lag last_value lead nth_value ntile percent_rank rank row_number
  json_array json_array_append json_array_insert json_contains json_contains_path json_depth json_extract json_insert
  json_keys json_length json_merge_patch json_merge_preserve json_object json_overlaps json_pretty json_quote json_remove
  json_replace json_schema_valid json_search json_set json_storage_size json_type json_unquote json_valid json_value
  charset coercibility collation connection_id current_role current_user database schema user session_user system_user
  version uuid uuid_to_bin bin_to_uuid is_uuid inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv6 md5 sha sha1 sha2
  nvl nvl2`);

const SQLITE = words(`abs char coalesce concat concat_ws format glob hex ifnull iif if instr length like likelihood likely lower
  ltrim max min nullif octet_length printf quote random randomblob replace round rtrim sign soundex sqlite_version substr
  substring trim typeof unhex unicode unlikely upper zeroblob
  date time datetime julianday unixepoch strftime timediff current_date current_time current_timestamp
  avg count group_concat string_agg sum total
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi pow power radians
  sin sinh sqrt tan tanh trunc
  json jsonb json_array jsonb_array json_array_length json_error_position json_extract jsonb_extract json_insert jsonb_insert
  json_object jsonb_object json_patch jsonb_patch json_pretty json_remove jsonb_remove json_replace jsonb_replace json_set
  jsonb_set json_type json_valid json_quote json_group_array jsonb_group_array json_group_object jsonb_group_object
  json_each json_tree`);

/**
 * Built-ins that write nothing but whose work or result has no bound but an argument: a row
 * source of any length, a string or blob of any size, a width of any size. One call can hold the
 * database (SQLite: Superset's own process) for as long as the caller likes, so they are refused
 * in every dialect, whatever the list above or PostgreSQL's catalog says.
 */
export const UNBOUNDED_FUNCTIONS = {
  postgresql: new Set(words('generate_series repeat lpad rpad array_fill format factorial')),
  mysql: new Set(words('repeat space lpad rpad')),
  mariadb: new Set(words('repeat space lpad rpad')),
  sqlite: new Set(words('zeroblob randomblob printf format')),
} as const;

const MYSQL = new Set([...MYSQL_STRING, ...MYSQL_NUMERIC, ...MYSQL_DATE, ...MYSQL_OTHER]);

export const READ_ONLY_FUNCTIONS = {
  mysql: MYSQL,
  mariadb: MYSQL,
  sqlite: new Set(SQLITE),
} as const;

/** Why a query may not call `name` for having no bound (completes "may not call …"), or undefined. */
export function unboundedCall(dialect: keyof typeof UNBOUNDED_FUNCTIONS, name: string): string | undefined {
  if (!UNBOUNDED_FUNCTIONS[dialect].has(name)) return undefined;
  return `${name}(): its work or its result grows without bound with its arguments`;
}

/** Why a query may not use a recursive common table expression: it repeats until its own condition says stop. */
export const RECURSIVE_CTE = 'may not use WITH RECURSIVE: it runs until its own condition stops it, which nothing here can bound';
