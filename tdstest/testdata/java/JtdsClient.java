// jTDS client for the tdstest suite (tdstest/clients_jtds_test.go).
//
// Usage: java -cp <classes>:/usr/share/java/jtds.jar JtdsClient <jdbc url> <user> <password> <batch>...
//
// It connects with the jTDS URL, user and password given (passed apart from the URL, whose
// properties are separated by semicolons a password could hold), then runs each batch with Statement.execute and walks all
// of its results in order. For every column of every row of every result set it prints one line,
//
//   <batch> <result set> <row> <column> <type name> <value>
//
// separated by tabs and counted from 0, where the type name is what getMetaData().getColumnTypeName
// reports and the value is getString's text when it is at most 64 characters long, or
// "<n chars, sha256 h>" when longer (h: the SHA-256 of its UTF-8 encoding), or, for the binary
// types, "<n bytes, sha256 h>". NULL prints as "NULL". Update counts print as
// "<batch> count <n>". The last line is "done". Any exception is printed to stderr and the exit
// status is 1.

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.sql.Types;

public class JtdsClient {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: JtdsClient <jdbc url> <user> <password> <batch>...");
            System.exit(2);
        }
        Class.forName("net.sourceforge.jtds.jdbc.Driver");
        DriverManager.setLoginTimeout(20);
        try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2])) {
            for (int b = 3; b < args.length; b++) {
                run(conn, b - 3, args[b]);
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.out.println("done");
    }

    // run executes one batch and prints each of its results.
    static void run(Connection conn, int batch, String sql) throws Exception {
        try (Statement st = conn.createStatement()) {
            st.setQueryTimeout(20);
            boolean isResultSet = st.execute(sql);
            int rs = 0;
            while (true) {
                if (isResultSet) {
                    try (ResultSet r = st.getResultSet()) {
                        print(batch, rs++, r);
                    }
                } else {
                    int n = st.getUpdateCount();
                    if (n == -1) {
                        return;
                    }
                    System.out.println(batch + "\tcount\t" + n);
                }
                isResultSet = st.getMoreResults();
            }
        }
    }

    static void print(int batch, int rs, ResultSet r) throws Exception {
        ResultSetMetaData md = r.getMetaData();
        int row = 0;
        while (r.next()) {
            for (int c = 1; c <= md.getColumnCount(); c++) {
                String v;
                int t = md.getColumnType(c);
                if (t == Types.BINARY || t == Types.VARBINARY || t == Types.LONGVARBINARY || t == Types.BLOB) {
                    byte[] b = r.getBytes(c);
                    v = b == null ? "NULL" : "<" + b.length + " bytes, sha256 " + sha256(b) + ">";
                } else {
                    String s = r.getString(c);
                    if (s == null) {
                        v = "NULL";
                    } else if (s.length() > 64) {
                        v = "<" + s.length() + " chars, sha256 " + sha256(s.getBytes(StandardCharsets.UTF_8)) + ">";
                    } else {
                        v = s;
                    }
                }
                System.out.println(batch + "\t" + rs + "\t" + row + "\t" + (c - 1) + "\t" + md.getColumnTypeName(c) + "\t" + v);
            }
            row++;
        }
    }

    static String sha256(byte[] b) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (byte x : MessageDigest.getInstance("SHA-256").digest(b)) {
            sb.append(String.format("%02x", x));
        }
        return sb.toString();
    }
}
