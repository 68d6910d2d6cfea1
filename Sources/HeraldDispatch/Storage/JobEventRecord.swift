/// One step of a job's status history (`job_events`), as `GET /jobs/{id}/events` shows it.
public struct JobEventRecord: Sendable, Codable, Equatable {
    public var fromStatus: JobStatus?
    public var toStatus: JobStatus
    public var actorID: String?
    public var actorRole: JobActor
    public var reason: String?
    public var createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case reason
        case fromStatus = "from_status"
        case toStatus = "to_status"
        case actorID = "actor_id"
        case actorRole = "actor_role"
        case createdAt = "created_at"
    }
}
