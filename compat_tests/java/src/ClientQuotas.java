// The Admin's client quota calls (KIP-546), for compat_tests/java.
//
//   ClientQuotas <bootstrap> alter [--validate] <entity> <key>=<value|remove>...
//       alterClientQuotas of one entity; <entity> is type=name pairs joined by "," (a type alone: its
//       default entity). Reports null, or the exception the entity's future failed with.
//   ClientQuotas <bootstrap> describe <strict|loose> <component>...
//       describeClientQuotas with a filter of components type=name (exact), type= (the default entity) or
//       type (any named entity); reports each entity found, as sorted "type=name" parts, with its quotas
//       sorted by key, the entities sorted; or the exception.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

public final class ClientQuotas {
    private ClientQuotas() {}

    public static void main(String[] argv) {
        Common.main("ClientQuotas", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new java.util.LinkedHashMap<>();
        operations.put("alter", ClientQuotas::alter);
        operations.put("describe", ClientQuotas::describe);
        return operations;
    }

    static ClientQuotaEntity entity(String spec) {
        Map<String, String> parts = new HashMap<>();
        for (String part : spec.split(",")) {
            int at = part.indexOf('=');
            parts.put(at < 0 ? part : part.substring(0, at), at < 0 ? null : part.substring(at + 1));
        }
        return new ClientQuotaEntity(parts);
    }

    static Object alter(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 2, "[--validate] <entity> <key>=<value|remove>...");
        boolean validate = args.get(0).equals("--validate");
        List<String> rest = validate ? args.subList(1, args.size()) : args;
        ClientQuotaEntity entity = entity(rest.get(0));
        List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
        for (String op : rest.subList(1, rest.size())) {
            String[] kv = op.split("=", 2);
            ops.add(new ClientQuotaAlteration.Op(kv[0], kv[1].equals("remove") ? null : Double.valueOf(kv[1])));
        }
        try (Admin admin = Common.admin(bootstrap)) {
            try {
                admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity, ops)),
                    new AlterClientQuotasOptions().validateOnly(validate)).values().get(entity).get();
                return null;
            } catch (Exception e) {
                return Common.describe(e);
            }
        }
    }

    static Object describe(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 1, "<strict|loose> <component>...");
        List<ClientQuotaFilterComponent> components = new ArrayList<>();
        for (String spec : args.subList(1, args.size())) {
            int at = spec.indexOf('=');
            if (at < 0) {
                components.add(ClientQuotaFilterComponent.ofEntityType(spec));
            } else if (at == spec.length() - 1) {
                components.add(ClientQuotaFilterComponent.ofDefaultEntity(spec.substring(0, at)));
            } else {
                components.add(ClientQuotaFilterComponent.ofEntity(spec.substring(0, at), spec.substring(at + 1)));
            }
        }
        ClientQuotaFilter filter = args.get(0).equals("strict")
            ? ClientQuotaFilter.containsOnly(components) : ClientQuotaFilter.contains(components);
        try (Admin admin = Common.admin(bootstrap)) {
            Map<ClientQuotaEntity, Map<String, Double>> found;
            try {
                found = admin.describeClientQuotas(filter).entities().get();
            } catch (Exception e) {
                return Common.describe(e);
            }
            Map<String, Object> shown = new TreeMap<>();
            for (Map.Entry<ClientQuotaEntity, Map<String, Double>> entry : found.entrySet()) {
                List<String> parts = new ArrayList<>();
                for (Map.Entry<String, String> part : new TreeMap<>(entry.getKey().entries()).entrySet()) {
                    parts.add(part.getKey() + "=" + (part.getValue() == null ? "<default>" : part.getValue()));
                }
                shown.put(String.join(",", parts), new TreeMap<>(entry.getValue()));
            }
            return shown;
        }
    }
}
