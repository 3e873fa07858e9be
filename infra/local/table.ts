import { readFileSync } from 'node:fs';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';
import { cloudFormationTags } from '#infra/local/yaml-tags';

/**
 * Creates the local table from the very definition AWS gets (infra/aws/table.yml), so local mode and
 * tests run on the same keys, indexes and TTL attribute as production.
 */
interface TableProperties {
  AttributeDefinitions: CreateTableCommandInput['AttributeDefinitions'];
  KeySchema: CreateTableCommandInput['KeySchema'];
  GlobalSecondaryIndexes?: CreateTableCommandInput['GlobalSecondaryIndexes'];
  TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
}

export function tableProperties(file = 'infra/aws/table.yml'): TableProperties {
  const template = parse(readFileSync(file, 'utf8'), { customTags: cloudFormationTags }) as {
    Resources: Record<string, { Type: string; Properties: TableProperties }>;
  };
  const table = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::DynamoDB::Table');
  if (!table) throw new Error(`${file} declares no AWS::DynamoDB::Table`);
  return table.Properties;
}

/** Creates the table when it does not exist yet; returns whether it did. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return false;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const properties = tableProperties();
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: properties.AttributeDefinitions,
      KeySchema: properties.KeySchema,
      GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes,
    }),
  );
  const ttl = properties.TimeToLiveSpecification;
  if (ttl?.Enabled) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
      }),
    );
  }
  return true;
}
