// The programs of compat_tests/java in one long-lived JVM: a JVM start costs about a second of a shared core,
// so the tests start one Runner per client line for the whole session instead of one JVM per scenario.
//
//   java -cp <classes>:<kafka-clients and friends> Runner
//
// First prints {"ready": "<kafka-clients version>"}, then reads requests from stdin, one a line, its fields
// separated by tabs: <Program> <bootstrap> <operation> [args...]; answers each with one JSON line on stdout,
// {"ok": ...} or {"error": ...} as the program's main would print, or {"usage": "..."} for a request the
// programs do not know. Ends at the end of stdin. Anything else the client would print goes to stderr, so
// stdout carries the answers alone.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.AppInfoParser;

public final class Runner {
    private Runner() {}

    // The share consumer, listConfigResources and Kafka Streams' streams protocol are 4.x's: the 3.9 line is
    // compiled without ShareGroups.java, Telemetry.java, Operations.java and StreamsApps.java.
    @SuppressWarnings("unchecked")
    private static void lineOnly(Map<String, Map<String, Common.Operation>> programs, String name) throws Exception {
        try {
            Class<?> program = Class.forName(name);
            programs.put(name, (Map<String, Common.Operation>) program.getDeclaredMethod("operations").invoke(null));
        } catch (ClassNotFoundException e) {
            // not on this line
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, Map<String, Common.Operation>> programs = new LinkedHashMap<>();
        programs.put("AdminCalls", AdminCalls.operations());
        programs.put("DelegationTokens", DelegationTokens.operations());
        programs.put("ClientQuotas", ClientQuotas.operations());
        programs.put("Groups", Groups.operations());
        lineOnly(programs, "ShareGroups");
        lineOnly(programs, "Telemetry");
        lineOnly(programs, "Operations");
        lineOnly(programs, "StreamsApps");
        programs.put("Transactions", Transactions.operations());
        PrintStream answers = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        answers.println(Common.json(Common.obj("ready", AppInfoParser.getVersion())));
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = requests.readLine(); line != null; line = requests.readLine()) {
            answers.println(answer(programs, Arrays.asList(line.split("\t", -1))));
        }
        // Threads a failed operation left behind (a producer's sender, an admin's network thread) must not
        // keep the JVM alive once the tests are done with it.
        System.exit(0);
    }

    private static String answer(Map<String, Map<String, Common.Operation>> programs, List<String> request) {
        Map<String, Common.Operation> operations = programs.get(request.get(0));
        if (request.size() < 3 || operations == null || !operations.containsKey(request.get(2))) {
            return Common.json(Common.obj("usage", "<Program> <bootstrap> <operation> [args...], programs "
                + programs.keySet() + ", not " + request));
        }
        try {
            return Common.answer(operations.get(request.get(2)), request.get(1), request.subList(3, request.size()));
        } catch (Common.UsageError e) {
            return Common.json(Common.obj("usage", request.get(0) + " <bootstrap> " + request.get(2) + " "
                + e.getMessage()));
        }
    }
}
