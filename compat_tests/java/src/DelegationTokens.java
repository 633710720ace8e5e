// Delegation tokens with the Java client (KIP-48): an Admin logged in with SCRAM-SHA-256 creates, describes and
// expires tokens; a producer logs in with a token (ScramLoginModule tokenauth="true": the token id as user name,
// its HMAC in base64 as password) and sends a record.
//
//   java ... DelegationTokens <sasl bootstrap> create <user> <password> [renewer]
//   java ... DelegationTokens <sasl bootstrap> describe <user> <password>
//   java ... DelegationTokens <sasl bootstrap> expire <user> <password> <hmac base64>
//   java ... DelegationTokens <sasl bootstrap> produce <token id> <hmac base64> <topic>

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

final class DelegationTokens {
    private static final String MECHANISM = "SCRAM-SHA-256";

    private DelegationTokens() {}

    public static void main(String[] argv) {
        Common.main("DelegationTokens", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("create", DelegationTokens::create);
        operations.put("describe", DelegationTokens::describe);
        operations.put("expire", DelegationTokens::expire);
        operations.put("produce", DelegationTokens::produce);
        return operations;
    }

    private static Properties scram(String bootstrap, String user, String password, boolean token) {
        Properties props = Common.client(bootstrap);
        props.put("security.protocol", "SASL_PLAINTEXT");
        props.put("sasl.mechanism", MECHANISM);
        props.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user + "\" password=\"" + password + "\"" + (token ? " tokenauth=\"true\"" : "") + ";");
        return props;
    }

    private static Admin admin(String bootstrap, List<String> args) {
        return Admin.create(scram(bootstrap, args.get(0), args.get(1), false));
    }

    private static Map<String, Object> token(DelegationToken token) {
        TokenInformation info = token.tokenInfo();
        List<String> renewers = new ArrayList<>();
        for (KafkaPrincipal renewer : info.renewers()) renewers.add(renewer.toString());
        return Common.obj("token_id", info.tokenId(), "hmac", token.hmacAsBase64String(),
            "owner", info.owner().toString(), "requester", info.tokenRequester().toString(), "renewers", renewers,
            "lifetime_ms", info.maxTimestamp() - info.issueTimestamp(),
            "expires_after_ms", info.expiryTimestamp() - info.issueTimestamp());
    }

    static Object create(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 2, "<user> <password> [renewer]");
        try (Admin admin = admin(bootstrap, args)) {
            CreateDelegationTokenOptions options = new CreateDelegationTokenOptions();
            if (args.size() > 2) options.renewers(List.of(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, args.get(2))));
            return token(admin.createDelegationToken(options).delegationToken().get(30, TimeUnit.SECONDS));
        }
    }

    static Object describe(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 2, "<user> <password>");
        try (Admin admin = admin(bootstrap, args)) {
            List<Object> tokens = new ArrayList<>();
            for (DelegationToken found : admin.describeDelegationToken().delegationTokens().get(30, TimeUnit.SECONDS)) {
                tokens.add(token(found));
            }
            return tokens;
        }
    }

    static Object expire(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<user> <password> <hmac base64>");
        try (Admin admin = admin(bootstrap, args)) {
            long expiry = admin.expireDelegationToken(Base64.getDecoder().decode(args.get(2)),
                new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp().get(30, TimeUnit.SECONDS);
            return Common.obj("expired", expiry > 0);
        }
    }

    static Object produce(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<token id> <hmac base64> <topic>");
        Properties props = scram(bootstrap, args.get(0), args.get(1), true);
        Map<String, String> settings = new LinkedHashMap<>();
        for (String name : props.stringPropertyNames()) settings.put(name, props.getProperty(name));
        // One try: a refused login must surface, not be retried until the delivery timeout.
        settings.put("max.block.ms", "15000");
        settings.put("delivery.timeout.ms", "20000");
        try (KafkaProducer<String, String> producer = Common.producer(bootstrap, settings)) {
            RecordMetadata sent = producer.send(new ProducerRecord<>(args.get(2), "k", "by token")).get(30, TimeUnit.SECONDS);
            return Common.obj("partition", sent.partition(), "offset", sent.offset());
        }
    }
}
