/*
 * Runs a Flink SQL script the way Flink's SQL client runs a file (sql-client.sh -f): statement
 * after statement, SET 'key' = 'value' into the session's configuration, EXECUTE STATEMENT SET
 * BEGIN ... END as one job, and waits for the job. The apache-flink package ships the SQL client
 * without the SQL gateway it needs, so tests/engines/real/flink_sql.py compiles this against the
 * package's jars and runs the script that `orderdoc translate --to flink-sql` printed on a local
 * MiniCluster, in streaming mode.
 *
 * Statements end with a semicolon at the end of a line (outside quotes); -- comments are removed
 * as the client removes them; a BEGIN ... END block ends at its END;.
 */

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class FlinkSqlScript {

    private static final Pattern SET =
            Pattern.compile("(?is)^SET\\s+'([^']*)'\\s*=\\s*'([^']*)'$");

    /** The line without its -- comment (a -- inside a quoted string or identifier stays). */
    static String withoutComment(String line) {
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '`') {
                quote = c;
            } else if (c == '-' && i + 1 < line.length() && line.charAt(i + 1) == '-') {
                return line.substring(0, i);
            }
        }
        return line;
    }

    static List<String> statements(String text) {
        List<String> found = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean block = false;
        for (String raw : text.split("\n")) {
            String line = withoutComment(raw);
            String trimmed = line.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.equalsIgnoreCase("BEGIN")) {
                block = true;
            }
            boolean ends = trimmed.endsWith(";") && (!block || trimmed.equalsIgnoreCase("END;"));
            if (ends) {
                String statement = current.toString().trim();
                found.add(statement.substring(0, statement.length() - 1));
                current.setLength(0);
                block = false;
            }
        }
        if (!current.toString().isBlank()) {
            throw new IllegalArgumentException("the script ends inside a statement: " + current);
        }
        return found;
    }

    public static void main(String[] args) throws Exception {
        String text = Files.readString(Path.of(args[0]), StandardCharsets.UTF_8);
        TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        TableResult last = null;
        for (String statement : statements(text)) {
            Matcher set = SET.matcher(statement.trim());
            if (set.matches()) {
                env.getConfig().getConfiguration().setString(set.group(1), set.group(2));
                continue;
            }
            TableResult result = env.executeSql(statement);
            if (result.getJobClient().isPresent()) {
                last = result;
            }
        }
        if (last == null) {
            throw new IllegalArgumentException("the script starts no job");
        }
        last.await();
    }
}
